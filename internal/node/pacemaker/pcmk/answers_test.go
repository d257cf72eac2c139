package pcmk

import (
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/base/command"
	"github.com/tnf-layer/tnf-layer/internal/testutil/toolanswers"
)

// answerErr is the error command.Run returns for a: nil for exit 0, else a *command.Error.
func answerErr(a toolanswers.Answer) error {
	if a.Exit == 0 {
		return nil
	}
	return &command.Error{Args: a.Args, Code: a.Exit, Output: command.FailureOutput(a.Stdout, a.Stderr)}
}

// stacks are the kept answers of every version: at least one Pacemaker 2 and one Pacemaker 3,
// each with every case.
func stacks(t *testing.T) ([]string, map[string]toolanswers.Stack) {
	t.Helper()
	names, stacks, err := toolanswers.Load("testdata/answers")
	if err != nil {
		t.Fatal(err)
	}
	for _, major := range []string{"pacemaker-2.", "pacemaker-3."} {
		if !strings.Contains(strings.Join(names, " "), major) {
			t.Errorf("no answers kept from %sx (make pacemaker-answers): %v", major, names)
		}
	}
	return names, stacks
}

// answer is a case's answer in a stack, failing the test where it was not kept.
func answer(t *testing.T, stack string, s toolanswers.Stack, name string) toolanswers.Answer {
	t.Helper()
	a, ok := s.Answers[name]
	if !ok {
		t.Fatalf("%s: no answer to %q (make pacemaker-answers)", stack, name)
	}
	return a
}

// TestNotSetAnswers: each version's real answers read as the layer must read them. An attribute
// or a section that is not there is "not set"; the same exit code for a node the cluster does not
// know, and Pacemaker not answering, are errors.
func TestNotSetAnswers(t *testing.T) {
	names, stacks := stacks(t)
	for _, tc := range []struct {
		name   string
		notSet bool // else: an error that is not "not set", or success where ok
		ok     bool
	}{
		{toolanswers.AttributeNotSet, true, false},
		{toolanswers.TransientNotSet, true, false},
		{toolanswers.PropertyNotSet, true, false},
		{toolanswers.SectionAbsent, true, false},
		{toolanswers.AttributeSet, false, true},
		{toolanswers.DeleteNotSet, false, true},
		{toolanswers.DeleteTransientNotSet, false, true},
		{toolanswers.AttributeOfUnknownNode, false, false},
		{toolanswers.AttributeWithoutCluster, false, false},
	} {
		for _, stack := range names {
			a := answer(t, stack, stacks[stack], tc.name)
			err := answerErr(a)
			switch {
			case NotSet(err) != tc.notSet:
				t.Errorf("%s: %s: NotSet %v, want %v (%v)", stack, tc.name, NotSet(err), tc.notSet, err)
			case tc.ok && err != nil:
				t.Errorf("%s: %s: %v, want success", stack, tc.name, err)
			case !tc.ok && err == nil:
				t.Errorf("%s: %s: success, want an error", stack, tc.name)
			}
		}
	}
}

// TestParsedAnswers: each version's real outputs parse into what they show.
func TestParsedAnswers(t *testing.T) {
	names, stacks := stacks(t)
	for _, stack := range names {
		s := stacks[stack]
		st, err := parseStatus([]byte(answer(t, stack, s, toolanswers.Status).Stdout))
		if err != nil {
			t.Fatalf("%s: %v", stack, err)
		}
		if !st.WithQuorum || !st.StonithEnabled || st.MaintenanceMode || st.DC == "" {
			t.Errorf("%s: status of a quorate cluster with fencing reads quorum %v, fencing %v, maintenance %v, DC %q", stack, st.WithQuorum, st.StonithEnabled, st.MaintenanceMode, st.DC)
		}
		for _, node := range []string{"node1", "node2"} {
			if n := st.Node(node); !n.Online || n.Standby || n.Maintenance || n.Unclean {
				t.Errorf("%s: %s reads %+v, want online", stack, node, n)
			}
			if role := st.Role("etcd", node); role != "Promoted" {
				t.Errorf("%s: etcd on %s reads %q, want Promoted", stack, node, role)
			}
			// The etcd agent publishes its record on each node (both lifetimes).
			if n := st.Node(node); len(n.Attributes) == 0 || !n.ExpectedUp {
				t.Errorf("%s: %s reads no attribute or not expected up: %+v", stack, node, n)
			}
		}
		alone, err := parseStatus([]byte(answer(t, stack, s, toolanswers.StatusAlone).Stdout))
		if err != nil {
			t.Fatalf("%s: %v", stack, err)
		}
		if alone.WithQuorum || !alone.Node("node1").Online || alone.Node("node2").Online {
			t.Errorf("%s: status of node1 alone reads quorum %v, node1 %+v, node2 %+v", stack, alone.WithQuorum, alone.Node("node1"), alone.Node("node2"))
		}

		conf, err := parseConfiguration([]byte(answer(t, stack, s, toolanswers.ConfigurationSection).Stdout))
		if err != nil {
			t.Fatalf("%s: %v", stack, err)
		}
		if len(conf.FenceDevices) != 4 || conf.Properties["stonith-enabled"] == "" {
			t.Errorf("%s: configuration reads %d fence devices, properties %v", stack, len(conf.FenceDevices), conf.Properties)
		}

		m, err := membership(parseCmap(answer(t, stack, s, toolanswers.Nodelist).Stdout),
			parseCmap(answer(t, stack, s, toolanswers.Runtime).Stdout), answer(t, stack, s, toolanswers.Quorum).Stdout)
		if err != nil {
			t.Fatalf("%s: %v", stack, err)
		}
		if !m.Quorate || m.WaitingForAll || !m.Nodes["node1"] || !m.Nodes["node2"] || len(m.Members) != 2 {
			t.Errorf("%s: membership of both nodes reads %+v", stack, m)
		}
		if q := answer(t, stack, s, toolanswers.QuorumAlone); q.Exit != 2 || !strings.Contains(q.Stdout, "Quorate:          No") {
			t.Errorf("%s: corosync-quorumtool alone: exit %d\n%s", stack, q.Exit, q.Stdout)
		}
		if q := answer(t, stack, s, toolanswers.QuorumWithoutCorosync); q.Exit == 0 || q.Exit == 2 {
			t.Errorf("%s: corosync-quorumtool without Corosync exits %d, which Members reads as an answer", stack, q.Exit)
		}

		links := parseLinks(answer(t, stack, s, toolanswers.Links).Stdout)
		if len(links) == 0 || links[0].Faulty {
			t.Errorf("%s: links of both nodes joined read %+v", stack, links)
		}
	}
}

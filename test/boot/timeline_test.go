//go:build boot

package boot_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tnf-layer/tnf-layer/test/logline"
)

// event is one point of a scenario's timeline.
type event struct {
	at         time.Time // host clock
	node, what string
}

// milestones are the journal lines a timeline is made of: the syslog identifier and a part of
// the message that marks each.
var milestones = []struct{ ident, contains, what string }{
	{"kernel", "Linux version", "boot (kernel)"},
	{"systemd", "Startup finished", "systemd running"},
	{"tnfctl", "setup: cluster configuration: applied", "cluster configuration applied"},
	{"corosync", "This node is within the primary component", "quorum"},
	{"pacemaker-fenced", "Operation 'reboot' targeting", "fencing"},
}

// agentMilestones are the etcd agent's log messages a timeline shows. Pacemaker logs an agent's
// output at info level, which reaches its own log file only, not the journal; what the agent
// does outside Pacemaker's actions goes to its log_file. Each line carries the agent's own
// timestamp.
var agentMilestones = map[string]string{
	"decision":                     "etcd's start decided",
	"launching etcd":               "etcd launched",
	"forcing a new cluster of one": "etcd forced a cluster of one",
	"learner promoted to voter":    "etcd learner promoted",
	"fencing alert: the peer was fenced; peer-fenced started": "fencing alert reached the etcd agent",
}

// journal reads name's journal for this boot and the ones before it since since, as
// milestones on the host's clock (the guest's offset is measured over SSH).
func (l *lab) journal(name string, since time.Time) []event {
	l.t.Helper()
	before := time.Now()
	guestNow, err := l.vms[name].sshClient.run("date +%s.%N")
	if err != nil {
		l.t.Logf("%s: no journal: %v", name, err)
		return nil
	}
	host := before.Add(time.Since(before) / 2)
	secs, err := strconv.ParseFloat(strings.TrimSpace(guestNow), 64)
	if err != nil {
		l.t.Fatalf("%s: date: %v", name, err)
	}
	offset := host.Sub(time.Unix(0, int64(secs*1e9)))
	out := l.run(name, fmt.Sprintf("journalctl -o json --no-pager --output-fields=MESSAGE,SYSLOG_IDENTIFIER --since=@%d", since.Add(-offset).Unix()))
	var events []event
	for _, line := range strings.Split(out, "\n") {
		var e struct {
			Realtime string `json:"__REALTIME_TIMESTAMP"`
			Ident    string `json:"SYSLOG_IDENTIFIER"`
			Message  any    `json:"MESSAGE"`
		}
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		us, _ := strconv.ParseInt(e.Realtime, 10, 64)
		at := time.UnixMicro(us).Add(offset)
		msg, _ := e.Message.(string) // binary messages come as byte arrays; none is a milestone
		for _, m := range milestones {
			if e.Ident == m.ident && strings.Contains(msg, m.contains) {
				what := m.what
				if m.what == "fencing" {
					what = "fencing: " + trimTo(msg, "targeting ")
				}
				events = append(events, event{at, name, what})
			}
		}
	}
	// peer-fenced and the watcher log to the agent's own file, the actions Pacemaker runs to its
	// log; etcd run by the exec runtime logs to the agent's file too (podman's etcd to the
	// container's log, which the timeline does not read).
	logged, err := l.vms[name].sshClient.run("cat /var/log/pacemaker/pacemaker.log /var/log/tnf-etcd.log 2>/dev/null | grep -h -e 'agent=tnf-etcd' -e 'became leader at term'")
	if err != nil {
		return events // no agent has run on this node yet
	}
	for _, line := range strings.Split(logged, "\n") {
		if e, ok := logline.ParseEtcd(line); ok {
			if !e.At.Add(offset).Before(since) {
				events = append(events, event{e.At.Add(offset), name, "etcd became leader"})
			}
			continue
		}
		at, ok := logline.AgentTime(line)
		if !ok || at.Add(offset).Before(since) {
			continue
		}
		msg := logline.Field(line, "msg")
		what, known := agentMilestones[msg]
		switch level := logline.Field(line, "level"); {
		case known && msg == "decision":
			what += ": " + logline.Field(line, "decision")
		case !known && (level == "WARN" || level == "ERROR"):
			// What went wrong on the way is part of the story: a slow failover is read from here.
			what = strings.ToLower(level) + ": " + msg
			if err := logline.Field(line, "err"); err != "" {
				what += ": " + err
			}
		case !known:
			continue
		}
		events = append(events, event{at.Add(offset), name, what + " (" + logline.Field(line, "action") + ")"})
	}
	return events
}

func trimTo(s, from string) string {
	if i := strings.Index(s, from); i >= 0 {
		return s[i:]
	}
	return s
}

// bmcEvents are the power actions the emulator carried out since since, with the client that
// asked (a fence agent in a guest names itself, fence_tnf_redfish; the test says gofish).
func (l *lab) bmcEvents(since time.Time) []event {
	data, err := os.ReadFile(filepath.Join(l.dir, "emulator.log"))
	if err != nil {
		l.t.Logf("no power actions: %v", err)
		return nil
	}
	var events []event
	for _, line := range strings.Split(string(data), "\n") {
		at, ok := logline.AgentTime(line)
		if !ok || logline.Field(line, "msg") != "power action" || at.Before(since) {
			continue
		}
		events = append(events, event{at, "bmc", fmt.Sprintf("%s %s by %s", logline.Field(line, "system"), logline.Field(line, "reset"), logline.Field(line, "client"))})
	}
	return events
}

// logTimeline prints the events in order, in seconds from t0, with the power actions since t0.
func (l *lab) logTimeline(title string, t0 time.Time, events ...[]event) {
	all := l.bmcEvents(t0)
	for _, e := range events {
		all = append(all, e...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].at.Before(all[j].at) })
	var b strings.Builder
	fmt.Fprintf(&b, "timeline: %s (seconds from %s)\n", title, t0.Format("15:04:05"))
	for _, e := range all {
		fmt.Fprintf(&b, "  %+8.1f  %-6s %s\n", e.at.Sub(t0).Seconds(), e.node, e.what)
	}
	l.t.Log(b.String())
}

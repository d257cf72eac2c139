package logline

import (
	"testing"
	"time"
)

func TestField(t *testing.T) {
	line := `time=2026-11-25T07:05:44.089Z level=INFO msg="launching etcd" agent=tnf-etcd force_new_cluster=true reason="peer said \"no\" to x=1"`
	for key, want := range map[string]string{
		"time": "2026-11-25T07:05:44.089Z", "msg": "launching etcd", "agent": "tnf-etcd",
		"force_new_cluster": "true", "level": "INFO", "node": "", "new_cluster": "", "reason": `peer said "no" to x=1`, "x": "",
	} {
		if got := Field(line, key); got != want {
			t.Errorf("Field(%q) = %q, want %q", key, got, want)
		}
	}
	if at, ok := AgentTime(line); !ok || !at.Equal(time.Date(2026, 11, 25, 7, 5, 44, 89e6, time.UTC)) {
		t.Errorf("AgentTime = %v, %v", at, ok)
	}
	if _, ok := AgentTime("no time here"); ok {
		t.Error("AgentTime of a line without time=: ok")
	}
}

func TestParseEtcd(t *testing.T) {
	l, ok := ParseEtcd(`{"level":"info","ts":"2026-11-25T07:05:45.210122Z","logger":"raft","msg":"593b7397e01f489 became leader at term 3"}`)
	if !ok || l.Msg != "593b7397e01f489 became leader at term 3" || !l.At.Equal(time.Date(2026, 11, 25, 7, 5, 45, 210122e3, time.UTC)) {
		t.Errorf("ParseEtcd = %+v, %v", l, ok)
	}
	for _, line := range []string{"", "plain text", `{"msg":"no time"}`, `{broken`} {
		if _, ok := ParseEtcd(line); ok {
			t.Errorf("ParseEtcd(%q): ok", line)
		}
	}
}

func TestPacemakerTime(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	line := "Nov 25 07:05:43.619 node1 pacemaker-fenced    [26010] (finalize_op) 	notice: Operation 'reboot' targeting node2 by node1: OK"
	for _, c := range []struct {
		line string
		near time.Time
		want time.Time
	}{
		{line, time.Date(2026, 11, 25, 7, 6, 0, 0, loc), time.Date(2026, 11, 25, 7, 5, 43, 619e6, loc)},
		{"Nov  5 07:05:43.619 node1", time.Date(2026, 11, 5, 8, 0, 0, 0, loc), time.Date(2026, 11, 5, 7, 5, 43, 619e6, loc)},
		// Written on New Year's Eve, read on New Year's Day.
		{"Dec 31 23:59:59.999 node1", time.Date(2027, 1, 1, 0, 0, 1, 0, loc), time.Date(2026, 12, 31, 23, 59, 59, 999e6, loc)},
		{"Feb 29 12:00:00.000 node1", time.Date(2028, 2, 29, 13, 0, 0, 0, loc), time.Date(2028, 2, 29, 12, 0, 0, 0, loc)},
	} {
		got, ok := PacemakerTime(c.line, c.near)
		if !ok || !got.Equal(c.want) {
			t.Errorf("PacemakerTime(%q) = %v, %v; want %v", c.line, got, ok, c.want)
		}
	}
	for _, bad := range []string{"", "short", "not a date at all, is it"} {
		if _, ok := PacemakerTime(bad, time.Now()); ok {
			t.Errorf("PacemakerTime(%q): ok", bad)
		}
	}
}

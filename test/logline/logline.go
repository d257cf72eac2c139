// Package logline reads the lines the tests take timelines from: the agents' slog text lines
// (logfmt), etcd's JSON lines and Pacemaker's log file lines, each with its own timestamp.
package logline

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/go-logfmt/logfmt"
)

// Field is key's value in a logfmt line ("" when absent or the line is not logfmt up to it).
func Field(line, key string) string {
	d := logfmt.NewDecoder(strings.NewReader(line))
	for d.ScanRecord() {
		for d.ScanKeyval() {
			if string(d.Key()) == key {
				return string(d.Value())
			}
		}
	}
	return ""
}

// AgentTime is the time an agent's slog line carries (time=, RFC 3339 with milliseconds).
func AgentTime(line string) (time.Time, bool) {
	at, err := time.Parse(time.RFC3339Nano, Field(line, "time"))
	return at, err == nil
}

// Etcd is one line of etcd's own log (zap's JSON).
type Etcd struct {
	At  time.Time
	Msg string
}

// ParseEtcd reads an etcd log line; false for anything else.
func ParseEtcd(line string) (Etcd, bool) {
	var l struct {
		TS  time.Time `json:"ts"`
		Msg string    `json:"msg"`
	}
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &l) != nil || l.TS.IsZero() {
		return Etcd{}, false
	}
	return Etcd{At: l.TS, Msg: l.Msg}, true
}

// pacemakerStamp is how Pacemaker's log file dates a line: local time, milliseconds, no year.
const pacemakerStamp = "Jan _2 15:04:05.000"

// PacemakerTime is the time a line of Pacemaker's log file carries, in the year of near (the
// year a line was written in is not in it; a line from the last days of December read in
// January counts as December's).
func PacemakerTime(line string, near time.Time) (time.Time, bool) {
	if len(line) < len(pacemakerStamp) {
		return time.Time{}, false
	}
	at, err := time.ParseInLocation(pacemakerStamp, line[:len(pacemakerStamp)], near.Location())
	if err != nil {
		return time.Time{}, false
	}
	in := func(year int) time.Time {
		return time.Date(year, at.Month(), at.Day(), at.Hour(), at.Minute(), at.Second(), at.Nanosecond(), near.Location())
	}
	if t := in(near.Year()); t.Sub(near) <= 180*24*time.Hour {
		return t, true
	}
	return in(near.Year() - 1), true
}

// Grep is text's lines that contain any of words, in order, joined by newlines: the part of a
// log or a metrics page a failure message shows.
func Grep(text string, words ...string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if slices.ContainsFunc(words, func(w string) bool { return strings.Contains(line, w) }) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// Package ocf holds what every OCF 1.1 resource agent shares: exit codes, the environment
// Pacemaker passes (OCF_RESKEY_*), clone notification data, and the meta-data document.
package ocf

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// Status is an OCF exit code.
type Status int

// OCF exit codes (OCF 1.1 §"Exit codes").
const (
	Success          Status = 0
	ErrGeneric       Status = 1
	ErrArgs          Status = 2
	ErrUnimplemented Status = 3
	ErrPerm          Status = 4
	ErrInstalled     Status = 5
	ErrConfigured    Status = 6
	NotRunning       Status = 7
	RunningPromoted  Status = 8
	FailedPromoted   Status = 9
)

var statusNames = map[Status]string{
	Success: "OCF_SUCCESS", ErrGeneric: "OCF_ERR_GENERIC", ErrArgs: "OCF_ERR_ARGS",
	ErrUnimplemented: "OCF_ERR_UNIMPLEMENTED", ErrPerm: "OCF_ERR_PERM",
	ErrInstalled: "OCF_ERR_INSTALLED", ErrConfigured: "OCF_ERR_CONFIGURED",
	NotRunning: "OCF_NOT_RUNNING", RunningPromoted: "OCF_RUNNING_PROMOTED",
	FailedPromoted: "OCF_FAILED_PROMOTED",
}

func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return "OCF_" + strconv.Itoa(int(s))
}

// Error is an action failure carrying the exit code Pacemaker must see.
type Error struct {
	Status Status
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

// Errorf builds an *Error.
func Errorf(s Status, msg string) *Error { return &Error{Status: s, Msg: msg} }

// Env is the environment an action runs in: resource parameters and Pacemaker meta attributes.
type Env struct {
	lookup func(string) (string, bool)
}

// OSEnv reads the process environment.
func OSEnv() Env { return Env{lookup: os.LookupEnv} }

// MapEnv reads from a map (tests).
func MapEnv(m map[string]string) Env {
	return Env{lookup: func(k string) (string, bool) { v, ok := m[k]; return v, ok }}
}

// Get returns any variable of the environment.
func (e Env) Get(name string) string {
	v, _ := e.lookup(name)
	return v
}

// Param returns OCF_RESKEY_<name>.
func (e Env) Param(name string) (string, bool) { return e.lookup("OCF_RESKEY_" + name) }

// Meta returns OCF_RESKEY_CRM_meta_<name>.
func (e Env) Meta(name string) string {
	v, _ := e.lookup("OCF_RESKEY_CRM_meta_" + name)
	return v
}

// Timeout is the operation's timeout from Pacemaker, or def when none was passed (manual runs).
func (e Env) Timeout(def time.Duration) time.Duration {
	ms, err := strconv.Atoi(e.Meta("timeout"))
	if err != nil || ms <= 0 {
		return def
	}
	return time.Duration(ms) * time.Millisecond
}

// Notification is the clone notification data of a notify action.
type Notification struct {
	Type       string // pre or post
	Operation  string // start, stop, promote, demote
	Start      []string
	Stop       []string
	Promote    []string
	Demote     []string
	Active     []string
	Promoted   []string
	Unpromoted []string
	Inactive   []string
}

// Notify parses the notification variables. Pacemaker 2.1 passes both the old (master/slave)
// and new (promoted/unpromoted) names; the new ones win when set.
func (e Env) Notify() Notification {
	list := func(names ...string) []string {
		for _, n := range names {
			if v := strings.Fields(e.Meta("notify_" + n)); len(v) > 0 {
				return v
			}
		}
		return nil
	}
	return Notification{
		Type:       e.Meta("notify_type"),
		Operation:  e.Meta("notify_operation"),
		Start:      list("start_uname"),
		Stop:       list("stop_uname"),
		Promote:    list("promote_uname"),
		Demote:     list("demote_uname"),
		Active:     list("active_uname"),
		Promoted:   list("promoted_uname", "master_uname"),
		Unpromoted: list("unpromoted_uname", "slave_uname"),
		Inactive:   list("inactive_uname"),
	}
}

// Contains reports whether node is in list.
func Contains(list []string, node string) bool {
	for _, n := range list {
		if n == node {
			return true
		}
	}
	return false
}

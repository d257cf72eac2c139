package main

import (
	"errors"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcddata"
	"github.com/tnf-layer/tnf-layer/internal/node/restore"
	"github.com/tnf-layer/tnf-layer/internal/node/unblock"
)

// Exit codes, for scripts: the contract tnfctl --help states.
const (
	exitError     = 1 // something could not be read or done
	exitNotProven = 2 // auto-unblock: the peer's BMC did not prove it off
	exitRefused   = 3 // the action would be unsafe, or was not confirmed
	// status's own, by state: health.ExitDegraded (4), health.ExitNotServing (5),
	// health.ExitFailoverOff (6).
)

// exitCoder is an error with its own exit code.
type exitCoder interface{ ExitCode() int }

// refused is a command that would be unsafe, or that the administrator did not confirm.
type refused struct{ error }

func (refused) ExitCode() int { return exitRefused }

func (r refused) Unwrap() error { return r.error }

// asRefusal makes the unblock and restore packages' refusals exit 3; other errors stay errors.
func asRefusal(err error) error {
	for _, r := range []error{unblock.ErrPeerMember, unblock.ErrNothingToGiveUp, unblock.ErrNoLocalData, unblock.ErrNotTheServed, unblock.ErrUnreadablePeer,
		etcddata.ErrNotASnapshot, restore.ErrGuest, restore.ErrUnderWay, restore.ErrInstaller, restore.ErrOtherRelease,
		restore.ErrOtherCluster, restore.ErrBeforeHandover, restore.ErrNotManaged, restore.ErrSnapshotPlace, restore.ErrNothingToAbort} {
		if errors.Is(err, r) {
			return refused{err}
		}
	}
	return err
}

// notProven exits 2: the timer's unit counts it as success (the node keeps waiting).
type notProven struct{ error }

func (notProven) ExitCode() int { return exitNotProven }

// stateExit is status's verdict on the state it printed: a code, no message.
type stateExit int

func (stateExit) Error() string { return "" }

func (s stateExit) ExitCode() int { return int(s) }

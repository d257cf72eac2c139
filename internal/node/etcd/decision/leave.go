package decision

// Stopping is what a node knows when Pacemaker stops or demotes its promoted instance: a
// planned stop (cluster stop, standby, reboot, shutdown). A node that is being fenced is not
// stopped by Pacemaker at all, so a stop always runs on a node that may talk to its peer.
type Stopping struct {
	Enabled    bool  // the graceful_leave parameter
	LocalVoter bool  // the local etcd answers as a voter (its leader may be moving this instant)
	Voters     int   // voting members in the local member list
	PeerVoter  bool  // the peer's etcd answers as a voter of the same cluster with a leader
	Leave      Claim // who holds the leave claim (taken only when the rest allows leaving)
}

// StopAction is what a stopping node does with its membership before etcd stops.
type StopAction int

const (
	// StopOnly: stop etcd and keep the member list as it is.
	StopOnly StopAction = iota
	// Leave: hand leadership to the peer if this node leads, remove this member while both
	// still vote, then stop: the peer keeps quorum alone and nothing is forced.
	Leave
	// StayLastVoter: the peer is leaving at the same time; wait until it has left, then stop
	// without leaving, so the last voter's data is the newest and the next cold boot starts
	// from it.
	StayLastVoter
)

var stopActionNames = []string{"stop-only", "leave", "stay-last-voter"}

func (a StopAction) String() string { return stopActionNames[a] }

// StopDecision is a stop action and why.
type StopDecision struct {
	Action StopAction
	Reason string
}

// NeedsLeaveClaim reports whether s allows leaving, so the node must try to take the leave
// claim (the cluster-wide arbiter between two nodes stopping at once) before deciding.
func (s Stopping) NeedsLeaveClaim() bool {
	return s.ReadsLeaveClaim() && s.PeerVoter
}

// ReadsLeaveClaim reports whether the claim's holder matters to the decision: whenever both
// members vote, since a peer that holds it is leaving and this node must stay the last voter.
func (s Stopping) ReadsLeaveClaim() bool {
	return s.Enabled && s.LocalVoter && s.Voters >= 2
}

// DecideStop is the stop policy. Invariants (proven in the table tests):
//   - the last voter never removes itself (Leave needs two voters and a serving peer);
//   - of two nodes stopping at once, at most one leaves: leaving needs the claim, which only
//     one node can hold, and the other then stays the last voter;
//   - every path ends in a stop: leaving is never a reason not to stop.
func DecideStop(s Stopping) StopDecision {
	switch {
	case !s.Enabled:
		return StopDecision{StopOnly, "graceful leave is turned off (graceful_leave=false)"}
	case !s.LocalVoter:
		return StopDecision{StopOnly, "the local etcd does not answer as a voter: it holds no vote to hand over"}
	case s.Voters < 2:
		return StopDecision{StopOnly, "the local member is the only voter: the last voter never removes itself"}
	case s.Leave == ClaimPeer:
		// Before the peer check: a peer that is handing its leadership over does not look like
		// a serving voter for a moment, and stopping now would make its leave fail.
		return StopDecision{StayLastVoter, "the peer is leaving: stay the last voter until it has left, then stop"}
	case !s.PeerVoter:
		return StopDecision{StopOnly, "the peer's etcd does not serve as a voter: removing this member needs both votes"}
	case s.Leave == ClaimSelf:
		return StopDecision{Leave, "both members vote and this node holds the leave claim: leave, the peer keeps quorum alone"}
	}
	return StopDecision{StopOnly, "the leave claim could not be taken: stop without leaving"}
}

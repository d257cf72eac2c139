// Package decision is the etcd agent's pure decision logic: given what this node holds, what the
// peer last published, what Pacemaker and the live cluster say about the peer, and who holds the
// force-new-cluster claim, it says what this node does with etcd. It does no I/O.
package decision

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/node/contract"
)

// Data describes an etcd data directory (local, or as the peer last published it).
type Data struct {
	Known     bool   // for the peer: it has published a record (the local node always knows its own)
	Present   bool   // a member data dir exists
	ClusterID uint64 // etcd cluster ID
	Index     uint64 // last raft index in the WAL
	// Term is the raft term of the last entry (0: unknown, e.g. a record of a previous
	// version). A running member reports its current term, which is never below it.
	Term uint64
	// Commit is, for the peer's record, the index its member had committed when the record was
	// published (0: not known, e.g. a record of an earlier agent). A running member publishes its
	// status's commit index, as Index too; a stopped one its WAL's last entry as Index and its
	// last hard state's commit here: the entries between were never committed, so never
	// acknowledged (see uncommittedTail).
	Commit  uint64
	Learner bool // the member is a learner in its own membership
	// Removed: the member is no longer in its own cluster's membership (it left gracefully).
	// Its data never serves again; it is published as no data (see etcdnode.Record).
	Removed bool
	// MemberID is the local member's ID (0: unknown). Only the local data has one: the records
	// the peer publishes carry none.
	MemberID uint64
	// OtherVoter is, when the local WAL's membership is exactly two voters, this member and one
	// other, that other's ID (0: any other membership, or not known). Local data only, like MemberID.
	OtherVoter uint64
	// VotedPeer (local data only): the member's hard state holds its vote, in its last entry's
	// term, for OtherVoter. raft asks only the voters of its configuration, so that leader was
	// elected with the local member as a voter, and in that term committed nothing without it.
	VotedPeer bool
}

// Promotion is the local member's promotion from learner to voter as this node's agent saw it
// applied on the peer's leader: the member, that leader's term (the same before the promotion
// and after it), and its commit index right after (zero: none seen in this boot). A leader
// commits entries alone only until it applies the promotion; for the rest of that term it
// commits nothing beyond Index without the member.
type Promotion struct{ Member, Term, Index uint64 }

// Pair is a member of a membership of exactly two voters as its node published it at its start
// (etcdnode.AttrPair): the member's ID and the other voter's. Zero: none published (an agent
// before 0.3.0, data of another membership, a node that created a cluster or joined one since,
// or one that withdrew it after its peer's member did not come: see StartBoth).
type Pair struct{ Member, Other uint64 }

// names says this pair and the peer's name each other: each member is the other's only other
// voter.
func (p Pair) names(peer Pair) bool {
	return p.Member != 0 && peer.Member != 0 && p.Member != peer.Member && p.Other == peer.Member && peer.Other == p.Member
}

// Compare orders two logs of one cluster as raft does when it elects a leader: the log whose
// last entry has the higher term is the more up to date, and of two with the same last term,
// the longer. Without both terms (a peer of a previous version) it falls back to the index.
// The term is what makes a published record that is a monitor interval old still safe: a
// member forced alone runs a higher term from its first write on, so data that ended before
// it is older however long its uncommitted tail is. It returns -1, 0 or 1.
func Compare(a, b Data) int {
	if a.Term != 0 && b.Term != 0 && a.Term != b.Term {
		return cmp.Compare(a.Term, b.Term)
	}
	return cmp.Compare(a.Index, b.Index)
}

// outOfService says the local data can never lead: a learner's may be incomplete, a removed
// member's belongs to a cluster that no longer counts it.
func (d Data) outOfService() string {
	switch {
	case d.Learner:
		return "the local member is a learner: its data may be incomplete, it never leads"
	case d.Removed:
		return "the local member left its cluster (graceful leave): its data never leads, it joins the peer"
	}
	return ""
}

// Peer is what this node knows about the peer's etcd right now.
type Peer int

const (
	// PeerAbsent: the peer's etcd is unreachable and Pacemaker has not told us anything more.
	PeerAbsent Peer = iota
	// PeerReady: the peer's agent instance is started but its etcd is not running (cold boot).
	PeerReady
	// PeerFenced: Pacemaker told us the peer's instance is stopped (fenced or cleanly stopped).
	PeerFenced
	// PeerVoter: the peer's etcd answers, is a voting member and its cluster has a leader.
	PeerVoter
	// PeerLearner: the peer's etcd answers and is a learner, i.e. its voter is gone.
	PeerLearner
	// PeerLeaderless: the peer's etcd answers as a voter whose cluster has no leader: it waits
	// for a member that is down (this node's, when it comes back from a loss whose fencing
	// never completed), or it is a cluster of one in its first election.
	PeerLeaderless
	// PeerUnknown: something accepts connections on the peer's client port but its status
	// cannot be read (a TLS failure, a reset, no answer to the handshake), and Pacemaker has
	// not told us the peer stopped. It may be a member that serves: never "not running".
	PeerUnknown
)

var peerNames = []string{"absent", "ready", "fenced", "voter", "learner", "leaderless", "unknown"}

func (p Peer) String() string { return peerNames[p] }

// Claim says who holds the cluster-wide force-new-cluster claim.
type Claim int

const (
	ClaimNone Claim = iota
	ClaimSelf
	ClaimPeer
)

var claimNames = []string{"none", "self", "peer"}

func (c Claim) String() string { return claimNames[c] }

// Input is everything a decision depends on.
type Input struct {
	Self, PeerName string
	Local          Data
	PeerData       Data // live status when the peer's etcd answers, else its last published record
	Peer           Peer
	Claim          Claim
	// GivenUp is the peer record an administrator gave up (tnfctl accept-data-loss): the peer's
	// data of that cluster, up to that index, no longer has to lead. Zero: nothing given up.
	GivenUp Data
	// Installer: the installer's etcd (the etcd container of the cluster-etcd-operator's static
	// pod, or an etcd this agent did not launch holding its ports) still runs on this node.
	// Nothing starts, joins or is moved aside here until the handover has taken it out.
	Installer bool
	// Restoring says why an administrator's restore from a snapshot (tnfctl restore) holds etcd
	// stopped on both nodes while it replaces the data ("" none, or it has given etcd back).
	// Nothing starts, joins or is moved aside meanwhile: whatever started etcd (an administrator's
	// pcs resource enable, another release's setup) would start it on data the restore is moving.
	Restoring string
	// Counted: the peer answers and its membership still counts the local member (MemberID) as
	// a voter. No cluster was forced since that member last ran, so it starts again as itself and
	// raft catches it up: the handover from the installer's etcd, node by node, is this case.
	Counted bool
	// Served is the etcd cluster ID this Pacemaker cluster has served (0: none recorded). It is
	// kept in the CIB, where it outlives both data dirs: once recorded, no node creates a new
	// cluster in its place (both data disks missing after a power loss look like a first boot)
	// or leads from data of another cluster, until an administrator gives it up by name.
	Served uint64
	// PeerGaveUp is the local data record an administrator gave up on the peer (its tnfctl
	// accept-data-loss). Local data of that cluster may be moved aside to join the peer's new
	// cluster; other data of its own never is.
	PeerGaveUp Data
	// PeerContract is the contract version of what the peer's agent publishes (contract.Parse:
	// 1 when it published none). One this agent cannot read makes it wait, whatever else it
	// sees: it never guesses what a record of another format means. 0: not read (the other
	// rules' tests), as readable.
	PeerContract int
	// EtcdVersion is the version of the etcd this node runs ("3.5.21"), PeerClusterVersion the
	// cluster version the serving peer's member reports ("3.6.0"). etcd allows no downgrade: a
	// member of an older minor version than its cluster's fails to join it (the cluster goes up
	// to 3.6 once a 3.6 member serves alone). Empty or unreadable: not known, no rule; etcd's own
	// check then refuses the member.
	EtcdVersion, PeerClusterVersion string
	// PeerEtcdVersion is the version of the etcd the peer runs, as its agent published it at its
	// start (agents before 0.3.0 publish none); beside a ready peer EtcdVersion is this node's,
	// as it published it too, so that both nodes compare the same two values. Empty: not known.
	PeerEtcdVersion string
	// Promoted is the local member's promotion, as this node's agent saw it in this boot.
	Promoted Promotion
	// Pair and PeerPair are the two-voter memberships both nodes published at their starts, read
	// beside a ready peer or one whose port answers without a status (this node's read back too,
	// so that both compare the same two; zero on a node that gave its pair up for this boot).
	Pair, PeerPair Pair
}

// bothStart says both nodes are back with their etcd stopped, each holding a voter of one cluster
// whose membership is the two of them (their published pairs name each other; this node's is its
// data's), with no administrator's record and no other served cluster in the way. Neither forced
// a cluster since the two last ran together (forcing removes the other member, and withdraws the
// pair first), so both start their members as they are: raft needs both votes and elects the
// more up-to-date log, as it does beside a leaderless peer. The peer, deciding on the same two
// pairs and records, comes to the same. A peer whose member has just started answers on its port
// but gives no status until it has a leader (etcd serves clients once ready): beside it the same
// holds. Starting a member of two voters is safe beside anything: it gets a leader only with the
// vote of the peer's member of that membership, and a member forced alone refuses it as removed.
func bothStart(in Input) bool {
	l, p := in.Local, in.PeerData
	return (in.Peer == PeerReady || in.Peer == PeerUnknown) && in.Pair.names(in.PeerPair) && in.Pair == (Pair{l.MemberID, l.OtherVoter}) &&
		l.Present && l.outOfService() == "" && p.Present && !p.Learner && p.ClusterID == l.ClusterID &&
		!in.GivenUp.Present && !in.PeerGaveUp.Present && (in.Served == 0 || in.Served == l.ClusterID)
}

// peerLeadsTie says the peer, not this node, leads from data equal to its own (both nodes back
// after going down together, or neither with data): the node whose etcd is of the older minor
// version, because etcd allows no downgrade, and a cluster forced on 3.6 would shut a 3.5 peer
// out until its update while one forced on 3.5 takes a 3.6 learner; the first by name when both
// run the same minor version or either version is not known. Both nodes compare what both
// published, so they agree.
func peerLeadsTie(in Input) bool {
	switch {
	case OlderMinor(in.PeerEtcdVersion, in.EtcdVersion):
		return true
	case OlderMinor(in.EtcdVersion, in.PeerEtcdVersion):
		return false
	}
	return in.PeerName < in.Self
}

// tieBreak says why the tie went the way it did, for the reason.
func tieBreak(in Input) string {
	if minorDiffers(in.EtcdVersion, in.PeerEtcdVersion) {
		return fmt.Sprintf("etcd %s beside %s: the older etcd leads, the newer can join it", in.EtcdVersion, in.PeerEtcdVersion)
	}
	return "first by name"
}

// minorDiffers says both versions are known and of different minor versions.
func minorDiffers(a, b string) bool { return OlderMinor(a, b) || OlderMinor(b, a) }

// OlderMinor says etcd version v is of an older minor version than c (another etcd's version, or
// a cluster's); false when either cannot be read.
func OlderMinor(v, c string) bool {
	vm, vn, ok1 := majorMinor(v)
	cm, cn, ok2 := majorMinor(c)
	return ok1 && ok2 && (vm < cm || vm == cm && vn < cn)
}

// majorMinor reads "3.5.21" or "3.6.0" as 3 and 5 or 6.
func majorMinor(v string) (major, minor int, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	maj, err1 := strconv.Atoi(parts[0])
	mnr, err2 := strconv.Atoi(parts[1])
	return maj, mnr, err1 == nil && err2 == nil
}

// minor is version v as major.minor ("3.6").
func minor(v string) string {
	m, n, _ := majorMinor(v)
	return fmt.Sprintf("%d.%d", m, n)
}

// covers says a given-up record takes in the peer's data: same cluster, not further on.
func (g Data) covers(p Data) bool {
	return g.Present && p.Present && p.ClusterID == g.ClusterID && p.Index <= g.Index
}

// Action is what to do with the local etcd.
type Action int

const (
	// Wait: stay ready without a promotion score; the peer leads and this node joins it later.
	Wait Action = iota
	// Refuse: stay ready without a promotion score, for a reason an administrator must read.
	Refuse
	// StartExisting: run the existing member as it is; it has (or gets) quorum without forcing.
	StartExisting
	// StartBoth: run the existing member as it is, as the peer runs its own (bothStart): a cold
	// boot that streams nothing. The agent waits a bounded time for the two to elect a leader,
	// then withdraws its pair and decides again by the other rules.
	StartBoth
	// ForceNewCluster: restart the local data as a cluster of one (claim first).
	ForceNewCluster
	// NewCluster: no data anywhere: bootstrap a new cluster of one (claim first).
	NewCluster
	// JoinAsLearner: move local data aside and join the serving peer as a learner.
	JoinAsLearner
	// RestoreNewCluster: restore the local keyspace as a new cluster of one, with a new cluster
	// ID (claim first). Only after an administrator gave up the peer's newer data: the peer's
	// data then never passes for this cluster's, and joins it when it returns.
	RestoreNewCluster
)

// EtcdTooOld is in the reason of a refusal to join a cluster of a newer etcd version: tnfctl
// status tells its reader to update the node, not to give data up.
const EtcdTooOld = "cannot join (etcd allows no downgrade)"

// ServedWithoutData begins the reason of a refusal to create a cluster in place of the one this
// cluster served (tnfctl status gives its own advice for it).
const ServedWithoutData = "no data on either node, but this cluster has served etcd cluster"

var actionNames = []string{"wait", "refuse", "start-existing", "start-both", "force-new-cluster", "new-cluster", "join-as-learner", "restore-new-cluster"}

func (a Action) String() string { return actionNames[a] }

// Leads reports whether the action makes this node the one that serves first, so it gets a
// promotion score.
func (a Action) Leads() bool { return a == StartExisting || a == StartBoth || a.NeedsClaim() }

// NeedsClaim reports whether the action creates a cluster and so must hold the claim.
func (a Action) NeedsClaim() bool {
	return a == ForceNewCluster || a == NewCluster || a == RestoreNewCluster
}

// Decision is an action and why.
type Decision struct {
	Action Action
	Reason string
	// ReleaseClaim: this node holds the claim but creates no cluster. A claim is held only while
	// its holder creates one, so this one was left by a run that lost its power or was killed
	// holding it; kept, it would make the peer wait for ever.
	ReleaseClaim bool
}

func decided(a Action, format string, args ...any) Decision {
	return Decision{Action: a, Reason: fmt.Sprintf(format, args...)}
}

// Decide is the agent's whole policy. Invariants (proven in the table tests):
//   - two nodes that see each other never both create a cluster (Leads + NeedsClaim);
//   - only one node can be granted the claim, and a claim held by a peer that is not fenced blocks;
//   - a node that holds the claim and creates no cluster releases it: a claim is held only while
//     its holder creates one, so it was left by a run that lost its power holding it;
//   - a node joins as a learner only of a serving voter, so both can never end as learners, and
//     never of a cluster whose etcd version is newer than its own etcd's (etcd allows no downgrade);
//   - of two ready nodes with the same data, or none, with no claim held and no served cluster
//     recorded, exactly one leads: the one whose etcd is of the older minor version, else the
//     first by name;
//   - beside a peer's member that runs without a leader a node never creates a cluster: it
//     starts its own member of that cluster, which gives the two their quorum back;
//   - of two nodes that see each other ready (or starting: a port without a status), whatever
//     claim is held, one starts both members (StartBoth) exactly when the other does: only where
//     both published pairs that name each other, of the data each holds, voters of one cluster,
//     with no administrator's record and no other served cluster; a pair that is no longer its
//     node's data's can leave one node starting alone, which start_both_timeout bounds; the pairs
//     change no other decision;
//   - while the installer's etcd runs on a node, or a restore from a snapshot holds etcd
//     stopped, that node only waits;
//   - beside a peer whose agent publishes a contract this agent cannot read, a node only waits;
//   - a node whose member the serving peer still counts as a voter starts that member again: no
//     learner join, nothing moved aside, no cluster forced;
//   - a node never forces while it is itself a learner, never leads from a removed member's data,
//     and never leads from data older than the peer's, nor from data of another cluster,
//     unless an administrator gave that peer data up (GivenUp): then the local data is restored
//     as a new cluster, never with no local data at all; the one exception to "older" is a
//     stopped peer whose record shows that what it holds beyond the local log it never
//     committed (uncommittedTail);
//   - once the CIB records a cluster this one served, no node creates a new cluster or leads
//     from data of another cluster, unless an administrator gave data up;
//   - a node with data of its own never moves it aside to join a peer of another cluster,
//     unless the peer's administrator gave that cluster's data up;
//   - beside a peer whose etcd port answers but whose status cannot be read, a node neither
//     leads nor joins, but for starting its member where both published pairs name each other
//     (a member of two voters gets a leader only with the peer's vote).
func Decide(in Input) Decision {
	d := decide(in)
	d.ReleaseClaim = in.Claim == ClaimSelf && !d.Action.NeedsClaim()
	return d
}

func decide(in Input) Decision {
	l, p := in.Local, in.PeerData
	if in.Installer {
		return decided(Wait, "the installer's etcd (the static pod's etcd container, or an etcd this agent did not launch "+
			"holding its ports) runs on this node: nothing starts here until the handover takes it out (tnfctl handover)")
	}
	if in.Restoring != "" {
		return decided(Wait, "%s", in.Restoring)
	}
	if in.PeerContract != 0 && !contract.Readable(in.PeerContract) {
		return decided(Wait, "%s", contract.Unreadable(in.PeerName, in.PeerContract))
	}
	switch in.Peer {
	case PeerUnknown:
		if bothStart(in) {
			return decided(StartBoth, "peer %s's etcd port answers without a status, as a member that is starting does, and both "+
				"nodes published voters of cluster %x whose membership is the two of them (%x, %x): start the existing member "+
				"(local %s); it gets a leader only with the peer's vote, and raft elects the more up-to-date log",
				in.PeerName, l.ClusterID, in.Pair.Member, in.Pair.Other, position(l))
		}
		return decided(Refuse, "something answers on peer %s's etcd client port but its status cannot be read (see the agent's log): "+
			"it may be serving, so this node neither leads nor joins until it can tell", in.PeerName)
	case PeerVoter:
		if in.Counted && l.Present && l.outOfService() == "" && l.ClusterID == p.ClusterID {
			return decided(StartExisting, "peer %s serves and its membership still counts the local member %x as a voter: "+
				"start it again as itself (cluster %x, %s); raft catches it up, nothing is moved aside", in.PeerName, l.MemberID, l.ClusterID, position(l))
		}
		if l.Present && l.outOfService() == "" && l.ClusterID == p.ClusterID && Compare(l, p) > 0 {
			return decided(Refuse, "local data (cluster %x, index %d) is newer than the serving peer's (index %d): "+
				"the nodes diverged; keep one data dir and move the other aside by hand", l.ClusterID, l.Index, p.Index)
		}
		if l.Present && !l.Removed && l.ClusterID != p.ClusterID && in.PeerGaveUp.ClusterID != l.ClusterID {
			return decided(Refuse, "local data belongs to cluster %x but peer %s serves cluster %x: data of its own is never moved "+
				"aside for another cluster; if the peer's cluster is the one to keep, move the local data dir away by hand",
				l.ClusterID, in.PeerName, p.ClusterID)
		}
		if OlderMinor(in.EtcdVersion, in.PeerClusterVersion) {
			return decided(Refuse, "peer %s serves a cluster of etcd version %s, which this node's etcd %s "+EtcdTooOld+
				": update this node's layer to a release with etcd %s or later; nothing is moved aside meanwhile",
				in.PeerName, in.PeerClusterVersion, in.EtcdVersion, minor(in.PeerClusterVersion))
		}
		return decided(JoinAsLearner, "peer %s serves as a voter (cluster %x, index %d): move local data aside and join as a learner",
			in.PeerName, p.ClusterID, p.Index)
	case PeerLearner:
		if l.Present && l.outOfService() == "" && l.ClusterID == p.ClusterID {
			return decided(StartExisting, "peer %s is a learner of this member: start the existing member, it has quorum alone", in.PeerName)
		}
		return decided(Refuse, "peer %s is a learner and no voter of its cluster is running", in.PeerName)
	case PeerLeaderless:
		return besideLeaderlessPeer(in)
	}

	// The peer's etcd is not running: this node may lead, wait for the peer, or refuse.
	peerComing := in.Peer == PeerReady
	blocked := func(why string, args ...any) Decision {
		if peerComing {
			return decided(Wait, why, args...)
		}
		return decided(Refuse, why, args...)
	}
	var lead Decision
	givenUp := l.Present && in.GivenUp.covers(p)
	// A tie (read where the cases before it proved both data of one cluster and in service).
	tie := peerComing && p.Present && Compare(l, p) == 0
	switch {
	case givenUp && (l.outOfService() != "" || (l.ClusterID == p.ClusterID && Compare(l, p) < 0)):
		lead = decided(RestoreNewCluster, "an administrator gave up peer %s's data up to index %d (cluster %x): "+
			"restore the local data (%s) as a new cluster of one", in.PeerName, in.GivenUp.Index, p.ClusterID, describe(l))
	case givenUp:
		lead = decided(ForceNewCluster, "an administrator gave up peer %s's data (cluster %x, index %d): "+
			"restart the local data (cluster %x, index %d) as a cluster of one", in.PeerName, p.ClusterID, p.Index, l.ClusterID, l.Index)
	case !l.Present:
		if p.Known && p.Present {
			return blocked("no local data; peer %s has data (cluster %x, index %d) and must lead", in.PeerName, p.ClusterID, p.Index)
		}
		if peerComing && !p.Known {
			return decided(Wait, "peer %s has not published its data yet", in.PeerName)
		}
		if peerComing && peerLeadsTie(in) {
			return decided(Wait, "neither node has data; %s bootstraps the cluster (%s)", in.PeerName, tieBreak(in))
		}
		if in.Served != 0 {
			return decided(Refuse, ServedWithoutData+" %x: never create an empty one "+
				"in its place (did a data disk not mount?); bring its data back, or give it up with tnfctl start-empty --give-up %x",
				in.Served, in.Served)
		}
		lead = decided(NewCluster, "no data on either node: bootstrap a new cluster of one")
	case l.outOfService() != "":
		return blocked("%s", l.outOfService())
	case p.Known && p.Present && p.ClusterID != l.ClusterID:
		return decided(Refuse, "local data belongs to cluster %x but peer %s published cluster %x: never reuse data of another cluster",
			l.ClusterID, in.PeerName, p.ClusterID)
	case peerComing && !p.Known:
		return decided(Wait, "peer %s has not published its data yet", in.PeerName)
	case bothStart(in):
		lead = decided(StartBoth, "both nodes are back with voters of cluster %x whose membership is the two of them (%x, %x): "+
			"start the existing member (local %s, peer %s) as peer %s starts its own; raft elects the more up-to-date log and "+
			"nothing is streamed", l.ClusterID, in.Pair.Member, in.Pair.Other, position(l), position(p), in.PeerName)
	case p.Known && p.Present && Compare(l, p) < 0 && !uncommittedTail(in):
		return blocked("local data (%s) is older than peer %s's last published %s: refusing to lead",
			position(l), in.PeerName, position(p))
	case tie && peerLeadsTie(in):
		return decided(Wait, "same data as peer %s (index %d); it leads (%s)", in.PeerName, l.Index, tieBreak(in))
	case in.Served != 0 && l.ClusterID != in.Served:
		return decided(Refuse, "local data belongs to cluster %x but this cluster has served cluster %x: never lead from data of "+
			"another cluster", l.ClusterID, in.Served)
	case tie:
		lead = decided(ForceNewCluster, "same data as peer %s (cluster %x, index %d); this node leads (%s): restart it as a cluster of one",
			in.PeerName, l.ClusterID, l.Index, tieBreak(in))
	case uncommittedTail(in):
		why := "the local member voted for it in that term"
		if !l.VotedPeer {
			why = fmt.Sprintf("it applied the local member's promotion in that term at index %d", in.Promoted.Index)
		}
		lead = decided(ForceNewCluster, "local data (cluster %x, %s) holds every entry peer %s's stopped member committed "+
			"(index %d; %s, so it committed nothing without it since); its %d entries beyond were never committed, "+
			"so never acknowledged: restart the local data as a cluster of one",
			l.ClusterID, position(l), in.PeerName, p.Commit, why, p.Index-l.Index)
	default:
		lead = decided(ForceNewCluster, "local data (cluster %x, index %d) is the most recent (peer %s: %s): restart it as a cluster of one",
			l.ClusterID, l.Index, in.PeerName, describe(p))
	}

	// Starting both members creates no cluster: a peer that forces removes this member, which
	// its etcd then refuses, so the claim does not hold it back (a claim left by a run that lost
	// its power would make it wait while the peer starts its own).
	if in.Claim == ClaimPeer && in.Peer != PeerFenced && lead.Action != StartBoth {
		return decided(Wait, "peer %s holds the force-new-cluster claim", in.PeerName)
	}
	return lead
}

// uncommittedTail says the local log lacks only entries the stopped peer never committed: its
// record (published as its etcd stopped: a frozen leader's, typically) is of the same cluster,
// ends in the same term T as the local log, and its commit index is within the local log; and
// the peer's leader in T committed nothing without the local member beyond the local log: the
// local member voted for it in T (VotedPeer), or T is the term in which that leader applied the
// local member's promotion, at a commit index within the local log (Promoted). Entries of one
// term come from that term's one leader, so the local log is a prefix of the peer's holding
// every entry that needed the local member to commit; what the peer holds beyond is its
// uncommitted tail, which raft also discards for the local log's once the local node leads. The
// commit index alone proves nothing: a leader that commits alone (before it applies a learner's
// promotion) may acknowledge a write before its hard state records the commit. Without this a
// frozen leader's last appended entries make the survivor refuse, and both members restart
// together. A peer that is starting (PeerReady) is waited for as before: it leads, keeping its
// longer log.
func uncommittedTail(in Input) bool {
	l, p := in.Local, in.PeerData
	promoted := in.Promoted.Member != 0 && in.Promoted.Member == l.MemberID && l.OtherVoter != 0 &&
		in.Promoted.Term == l.Term && in.Promoted.Index <= l.Index
	return (in.Peer == PeerFenced || in.Peer == PeerAbsent) && p.Known && p.Present && !p.Learner && p.Commit != 0 &&
		l.ClusterID == p.ClusterID && l.Term != 0 && l.Term == p.Term && p.Commit <= l.Index && l.Index < p.Index &&
		(l.VotedPeer || promoted)
}

// besideLeaderlessPeer decides while the peer's etcd runs as a voter without a leader. Such a
// member waits for its other voter, which is this node's member as long as neither node forced a
// cluster since (a forced member is alone and elects itself at once); it is what a node finds
// when it comes back from a loss whose fencing never completed (its BMC hung or was unreachable
// until the node was powered on again). Starting the local member gives the two their quorum,
// and raft's election picks the more up-to-date log, so no data leads by this node's decision and
// older local data is caught up. Creating a cluster instead would take over from a running member.
func besideLeaderlessPeer(in Input) Decision {
	l, p := in.Local, in.PeerData
	switch {
	case in.Claim == ClaimPeer:
		// The peer is creating a cluster of one: this is its first election.
		return decided(Wait, "peer %s holds the force-new-cluster claim", in.PeerName)
	case !l.Present:
		return decided(Wait, "peer %s's member runs without a leader and this node has no member to give it one: "+
			"it serves once this node is confirmed down (fencing or tnfctl confirm-peer-down), then this node joins it", in.PeerName)
	case l.outOfService() != "":
		return decided(Wait, "%s", l.outOfService())
	case l.ClusterID != p.ClusterID:
		return decided(Refuse, "local data belongs to cluster %x but peer %s runs cluster %x: never reuse data of another cluster",
			l.ClusterID, in.PeerName, p.ClusterID)
	}
	return decided(StartExisting, "peer %s's member runs without a leader, waiting for this one: start the existing member "+
		"(local %s, peer %s); the two have quorum and raft elects the more up-to-date log", in.PeerName, position(l), position(p))
}

// position is where a log ends: "index N" and, when known, "term T".
func position(d Data) string {
	if d.Term == 0 {
		return fmt.Sprintf("index %d", d.Index)
	}
	return fmt.Sprintf("index %d, term %d", d.Index, d.Term)
}

func describe(d Data) string {
	switch {
	case !d.Known:
		return "nothing published"
	case !d.Present:
		return "no data"
	default:
		return fmt.Sprintf("index %d", d.Index)
	}
}

package decision

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/node/contract"
)

const clusterC, clusterD = 0xc0ffee, 0xd00d

var (
	peerRecord = Data{Known: true, Present: true, ClusterID: clusterC, Index: 100, Term: 5}
	localData  = map[string]Data{
		"none":    {Known: true},
		"older":   {Known: true, Present: true, ClusterID: clusterC, Index: 90, Term: 5},
		"equal":   {Known: true, Present: true, ClusterID: clusterC, Index: 100, Term: 5},
		"newer":   {Known: true, Present: true, ClusterID: clusterC, Index: 110, Term: 5},
		"other":   {Known: true, Present: true, ClusterID: clusterD, Index: 100, Term: 5},
		"learner": {Known: true, Present: true, ClusterID: clusterC, Index: 100, Term: 5, Learner: true},
		"removed": {Known: true, Present: true, ClusterID: clusterC, Index: 100, Term: 5, Removed: true},
		// Longer, but ended in an earlier term: the peer was forced alone and wrote on.
		"longer-earlier-term": {Known: true, Present: true, ClusterID: clusterC, Index: 110, Term: 4},
		// Shorter, but of a later term: this node was forced alone after the peer's record.
		"shorter-later-term": {Known: true, Present: true, ClusterID: clusterC, Index: 90, Term: 6},
	}
)

// TestDecideTable covers every combination of local data, peer state and claim holder.
// The local node is "node1", which sorts first and so wins ties.
func TestDecideTable(t *testing.T) {
	const (
		W = Wait
		R = Refuse
		S = StartExisting
		F = ForceNewCluster
		J = JoinAsLearner
	)
	rows := []tableRow{
		{"none", PeerAbsent, [3]Action{R, R, R}},
		{"none", PeerReady, [3]Action{W, W, W}},
		{"none", PeerFenced, [3]Action{R, R, R}},
		{"none", PeerVoter, [3]Action{J, J, J}},
		{"none", PeerLearner, [3]Action{R, R, R}},
		{"none", PeerLeaderless, [3]Action{W, W, W}},
		{"none", PeerUnknown, [3]Action{R, R, R}},

		{"older", PeerAbsent, [3]Action{R, R, R}},
		{"older", PeerReady, [3]Action{W, W, W}},
		{"older", PeerFenced, [3]Action{R, R, R}},
		{"older", PeerVoter, [3]Action{J, J, J}},
		{"older", PeerLearner, [3]Action{S, S, S}},
		{"older", PeerLeaderless, [3]Action{S, S, W}},
		{"older", PeerUnknown, [3]Action{R, R, R}},

		{"equal", PeerAbsent, [3]Action{F, F, W}},
		{"equal", PeerReady, [3]Action{F, F, W}},
		{"equal", PeerFenced, [3]Action{F, F, F}},
		{"equal", PeerVoter, [3]Action{J, J, J}},
		{"equal", PeerLearner, [3]Action{S, S, S}},
		{"equal", PeerLeaderless, [3]Action{S, S, W}},
		{"equal", PeerUnknown, [3]Action{R, R, R}},

		{"newer", PeerAbsent, [3]Action{F, F, W}},
		{"newer", PeerReady, [3]Action{F, F, W}},
		{"newer", PeerFenced, [3]Action{F, F, F}},
		{"newer", PeerVoter, [3]Action{R, R, R}},
		{"newer", PeerLearner, [3]Action{S, S, S}},
		{"newer", PeerLeaderless, [3]Action{S, S, W}},
		{"newer", PeerUnknown, [3]Action{R, R, R}},

		{"other", PeerAbsent, [3]Action{R, R, R}},
		{"other", PeerReady, [3]Action{R, R, R}},
		{"other", PeerFenced, [3]Action{R, R, R}},
		{"other", PeerVoter, [3]Action{R, R, R}},
		{"other", PeerLearner, [3]Action{R, R, R}},
		{"other", PeerLeaderless, [3]Action{R, R, W}},
		{"other", PeerUnknown, [3]Action{R, R, R}},

		{"learner", PeerAbsent, [3]Action{R, R, R}},
		{"learner", PeerReady, [3]Action{W, W, W}},
		{"learner", PeerFenced, [3]Action{R, R, R}},
		{"learner", PeerVoter, [3]Action{J, J, J}},
		{"learner", PeerLearner, [3]Action{R, R, R}},
		{"learner", PeerLeaderless, [3]Action{W, W, W}},
		{"learner", PeerUnknown, [3]Action{R, R, R}},

		{"removed", PeerAbsent, [3]Action{R, R, R}},
		{"removed", PeerReady, [3]Action{W, W, W}},
		{"removed", PeerFenced, [3]Action{R, R, R}},
		{"removed", PeerVoter, [3]Action{J, J, J}},
		{"removed", PeerLearner, [3]Action{R, R, R}},
		{"removed", PeerLeaderless, [3]Action{W, W, W}},
		{"removed", PeerUnknown, [3]Action{R, R, R}},

		{"longer-earlier-term", PeerAbsent, [3]Action{R, R, R}},
		{"longer-earlier-term", PeerReady, [3]Action{W, W, W}},
		{"longer-earlier-term", PeerFenced, [3]Action{R, R, R}},
		{"longer-earlier-term", PeerVoter, [3]Action{J, J, J}},
		{"longer-earlier-term", PeerLearner, [3]Action{S, S, S}},
		{"longer-earlier-term", PeerLeaderless, [3]Action{S, S, W}},
		{"longer-earlier-term", PeerUnknown, [3]Action{R, R, R}},

		{"shorter-later-term", PeerAbsent, [3]Action{F, F, W}},
		{"shorter-later-term", PeerReady, [3]Action{F, F, W}},
		{"shorter-later-term", PeerFenced, [3]Action{F, F, F}},
		{"shorter-later-term", PeerVoter, [3]Action{R, R, R}},
		{"shorter-later-term", PeerLearner, [3]Action{S, S, S}},
		{"shorter-later-term", PeerLeaderless, [3]Action{S, S, W}},
		{"shorter-later-term", PeerUnknown, [3]Action{R, R, R}},
	}
	if got, want := checkTable(t, rows, Input{Self: "node1", PeerName: "node2"}), len(localData)*len(peerNames)*len(claimNames); got != want {
		t.Fatalf("table covers %d combinations, want all %d", got, want)
	}
}

// tableRow is one local data and peer state, with the action wanted for each claim holder.
type tableRow struct {
	local string
	peer  Peer
	want  [3]Action // claim none, self, peer
}

// checkTable decides every row against peerRecord (base gives the names and what is given up)
// and returns how many distinct combinations it covered.
func checkTable(t *testing.T, rows []tableRow, base Input) int {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range rows {
		for c, want := range r.want {
			in := base
			in.Local, in.PeerData, in.Peer, in.Claim = localData[r.local], peerRecord, r.peer, Claim(c)
			got := Decide(in)
			name := fmt.Sprintf("%s/%s/claim-%s", r.local, r.peer, Claim(c))
			seen[name] = true
			if got.Action != want {
				t.Errorf("%s: got %s (%s), want %s", name, got.Action, got.Reason, want)
			}
			if got.Reason == "" {
				t.Errorf("%s: no reason", name)
			}
		}
	}
	return len(seen)
}

// TestDecideEdges covers what the main table holds fixed: the tie-break, an unpublished or
// empty peer record, and a first boot with no data anywhere.
func TestDecideEdges(t *testing.T) {
	unknown := Data{}
	empty := Data{Known: true}
	rows := []struct {
		name  string
		self  string
		local Data
		peer  Data
		state Peer
		claim Claim
		want  Action
	}{
		{"tie lost by name", "node2", localData["equal"], peerRecord, PeerReady, ClaimNone, Wait},
		{"tie alone is no tie", "node2", localData["equal"], peerRecord, PeerFenced, ClaimNone, ForceNewCluster},
		{"peer not yet published, peer coming", "node1", localData["equal"], unknown, PeerReady, ClaimNone, Wait},
		{"peer never published, peer gone", "node1", localData["equal"], unknown, PeerFenced, ClaimNone, ForceNewCluster},
		{"peer published no data", "node1", localData["older"], empty, PeerReady, ClaimNone, ForceNewCluster},
		{"no data anywhere, first by name", "node1", localData["none"], empty, PeerReady, ClaimNone, NewCluster},
		{"no data anywhere, second by name", "node2", localData["none"], empty, PeerReady, ClaimNone, Wait},
		{"no data, peer not yet published", "node1", localData["none"], unknown, PeerReady, ClaimNone, Wait},
		{"no data, peer gone without data", "node2", localData["none"], empty, PeerAbsent, ClaimNone, NewCluster},
		{"no data, peer gone, never published", "node2", localData["none"], unknown, PeerFenced, ClaimNone, NewCluster},
		{"peer left gracefully (published as no data), tie on index", "node2", localData["equal"], published(localData["removed"], true), PeerReady, ClaimNone, ForceNewCluster},
		{"peer published other cluster, we have none, it is serving", "node1", localData["none"], Data{Known: true, Present: true, ClusterID: clusterD, Index: 5}, PeerVoter, ClaimNone, JoinAsLearner},
		{"peer of a previous version (no term): the index decides, longer", "node1", localData["longer-earlier-term"], withoutTerm(peerRecord), PeerFenced, ClaimNone, ForceNewCluster},
		{"peer of a previous version (no term): the index decides, shorter", "node1", localData["shorter-later-term"], withoutTerm(peerRecord), PeerFenced, ClaimNone, Refuse},
		{"same term, same index, tie lost by name", "node2", localData["equal"], peerRecord, PeerReady, ClaimNone, Wait},
		{"tie lost by name, holding a claim an earlier run left", "node2", localData["equal"], peerRecord, PeerReady, ClaimSelf, Wait},
		{"tie won by name, but the peer holds the claim", "node1", localData["equal"], peerRecord, PeerReady, ClaimPeer, Wait},
		{"no data anywhere, second by name, holding a claim an earlier run left", "node2", localData["none"], empty, PeerReady, ClaimSelf, Wait},
	}
	for _, r := range rows {
		peerName := "node2"
		if r.self == "node2" {
			peerName = "node1"
		}
		got := Decide(Input{Self: r.self, PeerName: peerName, Local: r.local, PeerData: r.peer, Peer: r.state, Claim: r.claim})
		if got.Action != r.want {
			t.Errorf("%s: got %s (%s), want %s", r.name, got.Action, got.Reason, r.want)
		}
		if release := r.claim == ClaimSelf && !r.want.NeedsClaim(); got.ReleaseClaim != release {
			t.Errorf("%s: release the claim %v, want %v", r.name, got.ReleaseClaim, release)
		}
	}
}

// TestDecideGivenUp covers every local data, peer state that is not serving, and claim holder
// once an administrator gave up the peer's record (tnfctl accept-data-loss): data that could not
// lead because of that record is restored as a new cluster, data that could lead but for it is
// forced, no data stays refused; the claim still decides who creates a cluster.
func TestDecideGivenUp(t *testing.T) {
	const (
		W = Wait
		R = Refuse
		F = ForceNewCluster
		X = RestoreNewCluster
	)
	rows := []tableRow{
		{"none", PeerAbsent, [3]Action{R, R, R}},
		{"none", PeerReady, [3]Action{W, W, W}},
		{"none", PeerFenced, [3]Action{R, R, R}},
		{"older", PeerAbsent, [3]Action{X, X, W}},
		{"older", PeerReady, [3]Action{X, X, W}},
		{"older", PeerFenced, [3]Action{X, X, X}},
		{"equal", PeerAbsent, [3]Action{F, F, W}},
		{"equal", PeerReady, [3]Action{F, F, W}},
		{"equal", PeerFenced, [3]Action{F, F, F}},
		{"newer", PeerAbsent, [3]Action{F, F, W}},
		{"newer", PeerReady, [3]Action{F, F, W}},
		{"newer", PeerFenced, [3]Action{F, F, F}},
		{"other", PeerAbsent, [3]Action{F, F, W}},
		{"other", PeerReady, [3]Action{F, F, W}},
		{"other", PeerFenced, [3]Action{F, F, F}},
		{"learner", PeerAbsent, [3]Action{X, X, W}},
		{"learner", PeerReady, [3]Action{X, X, W}},
		{"learner", PeerFenced, [3]Action{X, X, X}},
		{"removed", PeerAbsent, [3]Action{X, X, W}},
		{"removed", PeerReady, [3]Action{X, X, W}},
		{"removed", PeerFenced, [3]Action{X, X, X}},
		{"longer-earlier-term", PeerAbsent, [3]Action{X, X, W}},
		{"longer-earlier-term", PeerReady, [3]Action{X, X, W}},
		{"longer-earlier-term", PeerFenced, [3]Action{X, X, X}},
		{"shorter-later-term", PeerAbsent, [3]Action{F, F, W}},
		{"shorter-later-term", PeerReady, [3]Action{F, F, W}},
		{"shorter-later-term", PeerFenced, [3]Action{F, F, F}},
	}
	base := Input{Self: "node2", PeerName: "node1", GivenUp: peerRecord}
	if got, want := checkTable(t, rows, base), len(localData)*3*len(claimNames); got != want {
		t.Fatalf("table covers %d combinations, want all %d", got, want)
	}
}

// TestGivenUpOnlyWhatItNames: a given-up record takes in the peer's data only of its cluster and
// up to its index; a serving peer is joined whatever was given up.
func TestGivenUpOnlyWhatItNames(t *testing.T) {
	further := Data{Known: true, Present: true, ClusterID: clusterC, Index: 101}
	other := Data{Known: true, Present: true, ClusterID: clusterD, Index: 100}
	rows := []struct {
		name     string
		givenUp  Data
		peerData Data
		peer     Peer
		want     Action
	}{
		{"the peer wrote on after what was given up", peerRecord, further, PeerFenced, Refuse},
		{"given up in another cluster", other, peerRecord, PeerFenced, Refuse},
		{"more than the peer has", further, peerRecord, PeerFenced, RestoreNewCluster},
		{"the peer serves", peerRecord, peerRecord, PeerVoter, JoinAsLearner},
	}
	for _, r := range rows {
		got := Decide(Input{Self: "node2", PeerName: "node1", Local: localData["removed"], PeerData: r.peerData, Peer: r.peer, GivenUp: r.givenUp})
		if got.Action != r.want {
			t.Errorf("%s: got %s (%s), want %s", r.name, got.Action, got.Reason, r.want)
		}
	}
}

func withoutTerm(d Data) Data { d.Term = 0; return d }

// node is one side of a two-node world for the pairwise invariants.
type node struct {
	name string
	data Data
}

func worlds() [][2]node {
	datas := []Data{
		{Known: true},
		{Known: true, Present: true, ClusterID: clusterC, Index: 90},
		{Known: true, Present: true, ClusterID: clusterC, Index: 100},
		{Known: true, Present: true, ClusterID: clusterC, Index: 100, Learner: true},
		{Known: true, Present: true, ClusterID: clusterC, Index: 100, Removed: true},
		{Known: true, Present: true, ClusterID: clusterD, Index: 100},
		{Known: true, Present: true, ClusterID: clusterC, Index: 110, Term: 4},
		{Known: true, Present: true, ClusterID: clusterC, Index: 90, Term: 6},
	}
	var out [][2]node
	for _, a := range datas {
		for _, b := range datas {
			out = append(out, [2]node{{"node1", a}, {"node2", b}})
		}
	}
	return out
}

// published is what one node sees of the other's record: either nothing yet, or the real data
// (a removed member's data is published as no data, as etcdnode.Record does).
func published(d Data, known bool) Data {
	switch {
	case !known:
		return Data{}
	case d.Removed:
		return Data{Known: true}
	}
	return d
}

// TestNeverBothCreateACluster proves that two nodes that see each other as ready (a cold boot,
// records published or not, in any order) never both decide to create a cluster, and that the
// claim protocol (the first to decide takes the claim, the other decides again seeing it)
// excludes the second one in every view Pacemaker can produce.
func TestNeverBothCreateACluster(t *testing.T) {
	for _, w := range worlds() {
		a, b := w[0], w[1]
		for _, aKnowsB := range []bool{false, true} {
			for _, bKnowsA := range []bool{false, true} {
				da := Decide(Input{Self: a.name, PeerName: b.name, Local: a.data, PeerData: published(b.data, aKnowsB), Peer: PeerReady})
				db := Decide(Input{Self: b.name, PeerName: a.name, Local: b.data, PeerData: published(a.data, bKnowsA), Peer: PeerReady})
				if da.Action.NeedsClaim() && db.Action.NeedsClaim() && aKnowsB && bKnowsA {
					t.Errorf("both create a cluster: %+v / %+v: %s; %s", a.data, b.data, da.Reason, db.Reason)
				}
				// Whoever takes the claim first, the other must then stand back, also when an
				// administrator gave up the first one's data on the second (both may then lead).
				for _, givenUp := range []Data{{}, a.data} {
					for _, first := range []int{0, 1} {
						views := [2]Input{
							{Self: a.name, PeerName: b.name, Local: a.data, PeerData: published(b.data, aKnowsB), Peer: PeerReady},
							{Self: b.name, PeerName: a.name, Local: b.data, PeerData: published(a.data, bKnowsA), Peer: PeerReady, GivenUp: givenUp},
						}
						if !Decide(views[first]).Action.NeedsClaim() {
							continue
						}
						second := views[1-first]
						for _, peerSeen := range []Peer{PeerReady, PeerAbsent} {
							second.Peer, second.Claim = peerSeen, ClaimPeer
							if d := Decide(second); d.Action.NeedsClaim() {
								t.Errorf("%s creates a cluster while %s holds the claim: %s", second.Self, views[first].Self, d.Reason)
							}
						}
					}
				}
			}
		}
	}
}

// TestAClaimNeverBlocksBoth proves that a claim left in the CIB by a node that lost its power
// while holding it never leaves two nodes that see each other waiting for ever: in every world
// where one of them leads without a claim, with the claim held by either one of them leads, or
// the holder releases the claim (and the world is the one without a claim).
func TestAClaimNeverBlocksBoth(t *testing.T) {
	for _, w := range worlds() {
		a, b := w[0], w[1]
		decideBoth := func(aClaim, bClaim Claim) (Decision, Decision) {
			return Decide(Input{Self: a.name, PeerName: b.name, Local: a.data, PeerData: published(b.data, true), Peer: PeerReady, Claim: aClaim}),
				Decide(Input{Self: b.name, PeerName: a.name, Local: b.data, PeerData: published(a.data, true), Peer: PeerReady, Claim: bClaim})
		}
		if da, db := decideBoth(ClaimNone, ClaimNone); !da.Action.Leads() && !db.Action.Leads() {
			continue
		}
		for holder, held := range [][2]Claim{{ClaimSelf, ClaimPeer}, {ClaimPeer, ClaimSelf}} {
			da, db := decideBoth(held[0], held[1])
			released := []bool{da.ReleaseClaim, db.ReleaseClaim}[holder]
			if !da.Action.Leads() && !db.Action.Leads() && !released {
				t.Errorf("%+v / %+v: nobody leads and the claim of %s stays: %s; %s", a.data, b.data, w[holder].name, da.Reason, db.Reason)
			}
		}
	}
}

// TestNeverBothLearners: a node joins as a learner only of a serving voter, so of two nodes
// that are not serving (not running etcd, or running it without a leader), none joins; and a
// learner never forces.
func TestNeverBothLearners(t *testing.T) {
	for _, w := range worlds() {
		for _, p := range []Peer{PeerAbsent, PeerReady, PeerFenced, PeerLeaderless} {
			for c := ClaimNone; c <= ClaimPeer; c++ {
				in := Input{Self: w[0].name, PeerName: w[1].name, Local: w[0].data, PeerData: w[1].data, Peer: p, Claim: c}
				d := Decide(in)
				if d.Action == JoinAsLearner {
					t.Errorf("joins a peer that is %s: %s", p, d.Reason)
				}
				if (w[0].data.Learner || w[0].data.Removed) && d.Action.Leads() {
					t.Errorf("a learner or removed member leads: %s", d.Reason)
				}
			}
		}
	}
}

// TestOlderNeverLeads: a node whose data is older than the peer's record never leads, also
// when it is longer but ended in an earlier term (the peer's record is a monitor interval old,
// the peer was forced alone and wrote on since).
func TestOlderNeverLeads(t *testing.T) {
	for _, local := range []string{"older", "longer-earlier-term"} {
		for _, p := range []Peer{PeerAbsent, PeerReady, PeerFenced} {
			for c := ClaimNone; c <= ClaimPeer; c++ {
				d := Decide(Input{Self: "node1", PeerName: "node2", Local: localData[local], PeerData: peerRecord, Peer: p, Claim: c})
				if d.Action.Leads() {
					t.Errorf("%s data leads with peer %s, claim %s: %s", local, p, c, d.Reason)
				}
			}
		}
	}
}

// TestUncommittedTail: beside a peer whose etcd stopped (a frozen leader's), a node whose log is
// shorter leads only when the peer's record shows that it never committed what it holds beyond:
// same cluster, same last term, its commit index within the local log, neither side a learner,
// and the local member's own data proves the peer's leader needed it in that term (its vote, or
// its promotion applied there at an index within the local log). Anything else is "older", as
// before; a peer that is starting is waited for.
func TestUncommittedTail(t *testing.T) {
	voted := Data{Known: true, Present: true, ClusterID: clusterC, Index: 97, Term: 5, MemberID: 0xb, OtherVoter: 0xa, VotedPeer: true}
	notVoted := voted
	notVoted.VotedPeer = false
	promotion := Promotion{Member: 0xb, Term: 5, Index: 60}
	stopped := Data{Known: true, Present: true, ClusterID: clusterC, Index: 100, Term: 5, Commit: 95}
	with := func(d Data, change func(*Data)) Data { change(&d); return d }
	rows := []struct {
		name        string
		local, peer Data
		promoted    Promotion
		state       Peer
		want        Action
	}{
		{"voted for the leader", voted, stopped, Promotion{}, PeerFenced, ForceNewCluster},
		{"promoted by the leader in this term", notVoted, stopped, promotion, PeerFenced, ForceNewCluster},
		{"promotion at the local end", notVoted, stopped, Promotion{Member: 0xb, Term: 5, Index: 97}, PeerFenced, ForceNewCluster},
		// The counterexample: the leader committed alone until it applied the promotion, and
		// may have acknowledged a write its hard state does not yet count as committed.
		{"neither voted nor promoted", notVoted, stopped, Promotion{}, PeerFenced, Refuse},
		{"promotion past the local end", notVoted, stopped, Promotion{Member: 0xb, Term: 5, Index: 98}, PeerFenced, Refuse},
		{"promotion in an earlier term", notVoted, stopped, Promotion{Member: 0xb, Term: 4, Index: 60}, PeerFenced, Refuse},
		{"promotion of another member", notVoted, stopped, Promotion{Member: 0xc, Term: 5, Index: 60}, PeerFenced, Refuse},
		// A forced start that began (Info.Data: no other voter) appended a removal of the peer.
		{"promoted, but a force began since", with(notVoted, func(d *Data) { d.OtherVoter = 0 }), stopped, promotion, PeerFenced, Refuse},
		{"commit at the local end", voted, with(stopped, func(d *Data) { d.Commit = 97 }), Promotion{}, PeerFenced, ForceNewCluster},
		{"commit past the local end", voted, with(stopped, func(d *Data) { d.Commit = 98 }), Promotion{}, PeerFenced, Refuse},
		{"commit not known", voted, with(stopped, func(d *Data) { d.Commit = 0 }), Promotion{}, PeerFenced, Refuse},
		{"peer in a later term", voted, with(stopped, func(d *Data) { d.Term = 6 }), Promotion{}, PeerFenced, Refuse},
		{"local term not known", with(voted, func(d *Data) { d.Term = 0 }), stopped, Promotion{}, PeerFenced, Refuse},
		{"peer a learner", voted, with(stopped, func(d *Data) { d.Learner = true }), Promotion{}, PeerFenced, Refuse},
		{"local a learner", with(voted, func(d *Data) { d.Learner = true }), stopped, Promotion{}, PeerFenced, Refuse},
		{"another cluster", with(voted, func(d *Data) { d.ClusterID = clusterD }), stopped, Promotion{}, PeerFenced, Refuse},
		{"peer starting", voted, stopped, Promotion{}, PeerReady, Wait},
		{"peer absent", voted, stopped, Promotion{}, PeerAbsent, ForceNewCluster},
	}
	for _, r := range rows {
		for c := ClaimNone; c <= ClaimPeer; c++ {
			want := r.want
			if want == ForceNewCluster && c == ClaimPeer && r.state != PeerFenced {
				want = Wait // a claim is overridden only on Pacemaker's word that the peer stopped
			}
			d := Decide(Input{Self: "node1", PeerName: "node2", Local: r.local, PeerData: r.peer, Peer: r.state, Claim: c, Promoted: r.promoted})
			if d.Action != want {
				t.Errorf("%s, claim %s: got %s (%s), want %s", r.name, c, d.Action, d.Reason, want)
			}
			if d.Action.Leads() && !strings.Contains(d.Reason, "3 entries beyond were never committed") {
				t.Errorf("%s: the reason does not say what is given up: %s", r.name, d.Reason)
			}
		}
	}
}

// TestNoClusterBesideAServingPeerItCannotReach: a peer whose instance is started but whose
// client port does not answer in time (a connect timeout reads as "not running": PeerReady) or
// answers without a status (PeerUnknown) may in fact serve, forced alone, on a node this one
// cannot reach. Beside it this node never creates a cluster. While the peer forces, it holds the
// claim, and its record may still be the one from before (claim peer: this node waits). It
// releases the claim only after publishing the forced member's status (etcdagent's lead), whose
// term is above every term this node's data can end in: a cluster of two voters elects no
// leader without the peer, so this node's last entry is of a term the peer knew, and the forced
// member elects itself in a later one. Whatever this node's tail, it is older (Compare).
func TestNoClusterBesideAServingPeerItCannotReach(t *testing.T) {
	const knownTerm = 5 // the last term both members knew before the peer forced alone
	before := Data{Known: true, Present: true, ClusterID: clusterC, Index: 100, Term: knownTerm}
	forced := Data{Known: true, Present: true, ClusterID: clusterC, Index: 101, Term: knownTerm + 1}
	for _, local := range []Data{
		{Known: true, Present: true, ClusterID: clusterC, Index: 90, Term: knownTerm - 1},
		{Known: true, Present: true, ClusterID: clusterC, Index: 100, Term: knownTerm},
		{Known: true, Present: true, ClusterID: clusterC, Index: 150, Term: knownTerm}, // an uncommitted tail
		{Known: true, Present: true, ClusterID: clusterC, Index: 150, Term: knownTerm - 1},
	} {
		for _, p := range []Peer{PeerReady, PeerUnknown} {
			for _, served := range []uint64{0, clusterC} {
				rows := []struct {
					record Data
					claim  Claim
				}{
					{before, ClaimPeer}, // forcing: its record not yet the forced member's
					{forced, ClaimPeer},
					{forced, ClaimNone}, // forced and serving, the claim released
				}
				for _, r := range rows {
					for _, versions := range [][2]string{{"", ""}, {"3.5.21", "3.6.0"}, {"3.6.0", "3.5.21"}} {
						in := Input{Self: "node1", PeerName: "node2", Local: local, PeerData: r.record, Peer: p, Claim: r.claim,
							Served: served, EtcdVersion: versions[0], PeerEtcdVersion: versions[1]}
						if d := Decide(in); d.Action.NeedsClaim() {
							t.Errorf("local %+v beside %s peer %+v, claim %s, served %x, etcd %v: %s (%s)",
								local, p, r.record, r.claim, served, versions, d.Action, d.Reason)
						}
					}
				}
			}
		}
	}
}

// TestNoClusterBesideALeaderlessMember proves that beside a peer whose member runs without a
// leader no node creates a cluster or joins as a learner, whatever its data, the peer's, the
// claim and what an administrator gave up: it starts its own member of that cluster or waits.
// (Older local data may start: raft's election restriction lets only the more up-to-date log
// lead, so the peer's newer entries win; TestOlderNeverLeads is about creating a cluster.)
func TestNoClusterBesideALeaderlessMember(t *testing.T) {
	for _, w := range worlds() {
		for c := ClaimNone; c <= ClaimPeer; c++ {
			for _, givenUp := range []Data{{}, w[1].data} {
				in := Input{Self: w[0].name, PeerName: w[1].name, Local: w[0].data, PeerData: w[1].data, Peer: PeerLeaderless, Claim: c, GivenUp: givenUp}
				d := Decide(in)
				if d.Action.NeedsClaim() || d.Action == JoinAsLearner {
					t.Errorf("%+v beside a leaderless %+v, claim %s: %s (%s)", w[0].data, w[1].data, c, d.Action, d.Reason)
				}
				if d.Action == StartExisting && (w[0].data.Learner || w[0].data.Removed || w[0].data.ClusterID != w[1].data.ClusterID) {
					t.Errorf("%+v starts beside a leaderless %+v: %s", w[0].data, w[1].data, d.Reason)
				}
			}
		}
	}
}

// TestDecideInstaller: while the installer's etcd runs on this node, it waits, whatever its
// data, the peer and the claim, and gives back a claim an earlier run left.
func TestDecideInstaller(t *testing.T) {
	n := 0
	for local, l := range localData {
		for p := range Peer(len(peerNames)) {
			for c := range Claim(len(claimNames)) {
				for _, counted := range []bool{false, true} {
					d := Decide(Input{Self: "node1", PeerName: "node2", Local: l, PeerData: peerRecord, Peer: p, Claim: c, Installer: true, Counted: counted})
					if d.Action != Wait || d.ReleaseClaim != (c == ClaimSelf) {
						t.Errorf("%s/%s/claim-%s/counted-%v: got %s (release %v): %s", local, p, c, counted, d.Action, d.ReleaseClaim, d.Reason)
					}
					n++
				}
			}
		}
	}
	if want := len(localData) * len(peerNames) * len(claimNames) * 2; n != want {
		t.Fatalf("covered %d combinations, want %d", n, want)
	}
}

// TestDecideRestoring: while a restore from a snapshot holds etcd stopped, a node waits, saying
// why, whatever its data, the peer, the claim and the records of given-up and served data, and
// gives back a claim an earlier run left.
func TestDecideRestoring(t *testing.T) {
	const why = "tnfctl restore on node1 holds etcd stopped (step restoring)"
	n := 0
	for local, l := range localData {
		for p := range Peer(len(peerNames)) {
			for c := range Claim(len(claimNames)) {
				for _, records := range []Input{{}, {GivenUp: peerRecord, Served: 7}, {PeerGaveUp: l, Counted: true}} {
					in := records
					in.Self, in.PeerName, in.Local, in.PeerData, in.Peer, in.Claim, in.Restoring = "node1", "node2", l, peerRecord, p, c, why
					d := Decide(in)
					if d.Action != Wait || d.Reason != why || d.ReleaseClaim != (c == ClaimSelf) {
						t.Errorf("%s/%s/claim-%s/%+v: got %s (release %v): %s", local, p, c, records, d.Action, d.ReleaseClaim, d.Reason)
					}
					n++
				}
			}
		}
	}
	if want := len(localData) * len(peerNames) * len(claimNames) * 3; n != want {
		t.Fatalf("covered %d combinations, want %d", n, want)
	}
}

// TestDecideContract: beside a peer whose agent publishes a contract this agent cannot read (two
// or more releases apart), a node only waits, whatever its data, the peer's state and the claim;
// beside the contracts it reads, the decision is the one without a contract.
func TestDecideContract(t *testing.T) {
	// Every published version near this one (versions start at 1).
	versions := []int{contract.Malformed}
	for v := contract.Version - 2; v <= contract.Version+2; v++ {
		if v >= 1 {
			versions = append(versions, v)
		}
	}
	n := 0
	for local, l := range localData {
		for p := range Peer(len(peerNames)) {
			for c := range Claim(len(claimNames)) {
				for _, pc := range versions {
					in := Input{Self: "node1", PeerName: "node2", Local: l, PeerData: peerRecord, Peer: p, Claim: c, PeerContract: pc}
					d := Decide(in)
					in.PeerContract = 0
					want := Decide(in)
					if !contract.Readable(pc) {
						want = Decision{Action: Wait, Reason: contract.Unreadable("node2", pc), ReleaseClaim: c == ClaimSelf}
					}
					if d != want {
						t.Errorf("%s/%s/claim-%s/contract-%d: got %s (release %v): %s; want %s: %s", local, p, c, pc, d.Action, d.ReleaseClaim, d.Reason, want.Action, want.Reason)
					}
					n++
				}
			}
		}
	}
	if want := len(localData) * len(peerNames) * len(claimNames) * len(versions); n != want {
		t.Fatalf("covered %d combinations, want %d", n, want)
	}
}

// TestDecideCounted: beside a serving peer whose membership still counts the local member as a
// voter, a member of that cluster that may serve starts again as itself, older or newer; what
// cannot (no data, a learner, a removed member, another cluster) decides as before. Counted
// changes nothing beside a peer that is not a serving voter.
func TestDecideCounted(t *testing.T) {
	const (
		S = StartExisting
		J = JoinAsLearner
	)
	want := map[string]Action{
		"none": J, "older": S, "equal": S, "newer": S, "other": Refuse, "learner": J, "removed": J,
		"longer-earlier-term": S, "shorter-later-term": S,
	}
	if len(want) != len(localData) {
		t.Fatalf("want covers %d local data, the table %d", len(want), len(localData))
	}
	for local, l := range localData {
		for p := range Peer(len(peerNames)) {
			for c := range Claim(len(claimNames)) {
				in := Input{Self: "node1", PeerName: "node2", Local: l, PeerData: peerRecord, Peer: p, Claim: c}
				uncounted := Decide(in)
				in.Counted = true
				got := Decide(in)
				name := fmt.Sprintf("%s/%s/claim-%s", local, p, c)
				switch {
				case p == PeerVoter && got.Action != want[local]:
					t.Errorf("%s: got %s (%s), want %s", name, got.Action, got.Reason, want[local])
				case p != PeerVoter && got != uncounted:
					t.Errorf("%s: counted changed %s to %s", name, uncounted.Action, got.Action)
				}
			}
		}
	}
}

// TestHandoverKeepsBothMembers walks the handover from the installer's etcd on both nodes of
// one healthy two-voter cluster, in either order, whatever the lag of the peer's leader: the
// first node waits while its installer etcd runs, then starts its member beside the peer's
// (serving and counting it, or already leaderless); the second does the same beside the first.
// No node ever forces a cluster, joins as a learner or moves its data aside.
func TestHandoverKeepsBothMembers(t *testing.T) {
	voters := []Data{localData["equal"], localData["older"], localData["newer"], localData["shorter-later-term"], localData["longer-earlier-term"]}
	for _, l := range voters {
		for _, installer := range []bool{true, false} {
			for _, p := range []Peer{PeerVoter, PeerLeaderless} {
				for _, c := range []Claim{ClaimNone, ClaimSelf} {
					d := Decide(Input{Self: "node2", PeerName: "node1", Local: l, PeerData: peerRecord, Peer: p, Claim: c, Installer: installer, Counted: true})
					want := StartExisting
					if installer {
						want = Wait
					}
					if d.Action != want || d.Action.NeedsClaim() {
						t.Errorf("%+v beside a %s peer, installer %v, claim %s: %s (%s), want %s", l, p, installer, c, d.Action, d.Reason, want)
					}
				}
			}
		}
	}
}

// TestServedClusterIsNeverReplaced: once the CIB records the cluster this one served, no view
// of either node creates a new cluster, and none forces data of another cluster, unless an
// administrator gave data up. Both data disks missing after a power loss is the case that
// created a new empty cluster before the record existed.
func TestServedClusterIsNeverReplaced(t *testing.T) {
	empty, unknown := Data{Known: true}, Data{}
	for local, l := range localData {
		for p := range Peer(len(peerNames)) {
			for c := range Claim(len(claimNames)) {
				for _, pd := range []Data{peerRecord, empty, unknown} {
					for _, served := range []uint64{clusterC, clusterD} {
						in := Input{Self: "node1", PeerName: "node2", Local: l, PeerData: pd, Peer: p, Claim: c, Served: served}
						d := Decide(in)
						name := fmt.Sprintf("%s/%s/claim-%s/peer-data %s/served %x", local, p, c, describe(pd), served)
						if d.Action == NewCluster {
							t.Errorf("%s: new cluster: %s", name, d.Reason)
						}
						if d.Action == ForceNewCluster && l.ClusterID != served {
							t.Errorf("%s: forces data of another cluster: %s", name, d.Reason)
						}
					}
				}
			}
		}
	}
	for _, self := range []string{"node1", "node2"} {
		in := Input{Self: self, PeerName: "node0", Local: localData["none"], PeerData: empty, Peer: PeerFenced}
		if d := Decide(in); d.Action != NewCluster {
			t.Fatalf("%s without a record: %s (%s), want %s", self, d.Action, d.Reason, NewCluster)
		}
		in.Served = clusterC
		if d := Decide(in); d.Action != Refuse || !strings.Contains(d.Reason, "start-empty --give-up c0ffee") {
			t.Errorf("%s with cluster c0ffee recorded: %s (%s), want %s naming the command", self, d.Action, d.Reason, Refuse)
		}
	}
}

// TestOwnDataNeverMovedForAnotherCluster: beside a serving peer of another cluster, a node with
// data of its own refuses; it joins when it has none, when its member was removed, or when the
// peer's administrator gave that cluster's data up.
func TestOwnDataNeverMovedForAnotherCluster(t *testing.T) {
	peerD := Data{Known: true, Present: true, ClusterID: clusterD, Index: 50, Term: 2}
	rows := []struct {
		name   string
		local  Data
		gaveUp Data
		want   Action
	}{
		{"data of its own", localData["equal"], Data{}, Refuse},
		{"a learner's data of its own", localData["learner"], Data{}, Refuse},
		{"given up on the peer", localData["equal"], localData["older"], JoinAsLearner},
		{"another cluster given up on the peer", localData["equal"], Data{Known: true, Present: true, ClusterID: 0xbad}, Refuse},
		{"no data", localData["none"], Data{}, JoinAsLearner},
		{"removed", localData["removed"], Data{}, JoinAsLearner},
	}
	for _, r := range rows {
		for _, counted := range []bool{false, true} {
			d := Decide(Input{Self: "node1", PeerName: "node2", Local: r.local, PeerData: peerD, Peer: PeerVoter, PeerGaveUp: r.gaveUp, Counted: counted})
			if d.Action != r.want {
				t.Errorf("%s (counted %v): %s (%s), want %s", r.name, counted, d.Action, d.Reason, r.want)
			}
		}
	}
}

// TestDecideEtcdVersion: beside a serving peer whose cluster runs a newer minor etcd version than
// this node's etcd, a join as a learner (which etcd would refuse) becomes a refusal that names
// both versions, and nothing is moved aside; every other decision, and every decision beside a
// cluster of the same, an older or an unreadable version, is the one without versions.
func TestDecideEtcdVersion(t *testing.T) {
	cases := []struct {
		local, cluster string
		refuses        bool
	}{
		{"3.5.21", "3.6.0", true},
		{"3.5.21", "3.7.0", true},
		{"2.3.8", "3.0.0", true},
		{"3.6.5", "3.5.0", false},
		{"3.6.5", "3.6.0", false},
		{"3.5.21", "3.5.0", false},
		{"", "3.6.0", false},
		{"3.5.21", "", false},
		{"3.5.21", "not-a-version", false},
		{"3", "3.6.0", false},
	}
	n := 0
	for _, vc := range cases {
		for local, l := range localData {
			for p := range Peer(len(peerNames)) {
				for c := range Claim(len(claimNames)) {
					for _, counted := range []bool{false, true} {
						in := Input{Self: "node1", PeerName: "node2", Local: l, PeerData: peerRecord, Peer: p, Claim: c, Counted: counted}
						without := Decide(in)
						in.EtcdVersion, in.PeerClusterVersion = vc.local, vc.cluster
						got := Decide(in)
						name := fmt.Sprintf("%s beside %s: %s/%s/claim-%s/counted-%v", vc.local, vc.cluster, local, p, c, counted)
						switch {
						case vc.refuses && without.Action == JoinAsLearner:
							if got.Action != Refuse || !strings.Contains(got.Reason, vc.local) || !strings.Contains(got.Reason, vc.cluster) {
								t.Errorf("%s: got %s: %s; want a refusal naming both versions", name, got.Action, got.Reason)
							}
						case got != without:
							t.Errorf("%s: got %s (%s), want %s (%s) as without versions", name, got.Action, got.Reason, without.Action, without.Reason)
						}
						n++
					}
				}
			}
		}
	}
	if want := len(cases) * len(localData) * len(peerNames) * len(claimNames) * 2; n != want {
		t.Fatalf("covered %d combinations, want %d", n, want)
	}
}

// etcdVersions are the etcd versions the tie-break tests publish for either node: none, two
// patch levels of two minor versions, a later minor version and something that is no version.
var etcdVersions = []string{"", "3.5.21", "3.5.26", "3.6.0", "3.6.5", "3.7.0", "v3.5.21", "not-a-version"}

// etcdMinor is each of etcdVersions' minor version, written out rather than computed by the code
// under test ("": not a version).
var etcdMinor = map[string]string{"": "", "3.5.21": "3.5", "3.5.26": "3.5", "3.6.0": "3.6", "3.6.5": "3.6", "3.7.0": "3.7",
	"v3.5.21": "3.5", "not-a-version": ""}

// TestTieGoesToTheOlderEtcd: of two ready nodes with the same data (both back after going down
// together) or with none (a first boot), for every pair of published etcd versions, exactly one
// leads: the node whose etcd is of the older minor version (a 3.6 learner can join a cluster
// created on 3.5, never the reverse), else node1.
func TestTieGoesToTheOlderEtcd(t *testing.T) {
	for _, data := range []string{"equal", "none"} {
		for _, v1 := range etcdVersions {
			for _, v2 := range etcdVersions {
				checkTie(t, data, v1, v2)
			}
		}
	}
}

// checkTie decides both nodes' views of a tie on data (both hold it) with node1's etcd at v1
// and node2's at v2.
func checkTie(t *testing.T, data, v1, v2 string) {
	t.Helper()
	view := func(self, peer, own, peers string) Input {
		return Input{Self: self, PeerName: peer, Local: localData[data], PeerData: published(localData[data], true), Peer: PeerReady,
			EtcdVersion: own, PeerEtcdVersion: peers}
	}
	d1, d2 := Decide(view("node1", "node2", v1, v2)), Decide(view("node2", "node1", v2, v1))
	want := "node1"
	if m1, m2 := etcdMinor[v1], etcdMinor[v2]; m1 != "" && m2 != "" && m2 < m1 {
		want = "node2"
	}
	name := fmt.Sprintf("%s data, node1 on %q, node2 on %q", data, v1, v2)
	if d1.Action.Leads() == d2.Action.Leads() {
		t.Errorf("%s: node1 %s (%s), node2 %s (%s): want exactly one to lead", name, d1.Action, d1.Reason, d2.Action, d2.Reason)
	} else if got := map[bool]string{true: "node1", false: "node2"}[d1.Action.Leads()]; got != want {
		t.Errorf("%s: %s leads, want %s: %s / %s", name, got, want, d1.Reason, d2.Reason)
	}
}

// TestEtcdVersionsDecideOnlyTheTie: published etcd versions change no decision but the tie's
// leader: for every world, peer state (but a serving voter, where this node's version meets the
// cluster's: TestDecideEtcdVersion), claim, served cluster and pair of versions, the decision is
// the one without versions unless both nodes are ready with the same data of one cluster, in
// service, or with none; there it is that one or its mirror (waiting instead of what the winner
// of the tie does, or the reverse).
func TestEtcdVersionsDecideOnlyTheTie(t *testing.T) {
	for _, w := range worlds() {
		for p := range Peer(len(peerNames)) {
			if p == PeerVoter {
				continue
			}
			for c := range Claim(len(claimNames)) {
				for _, served := range []uint64{0, clusterC, clusterD} {
					in := Input{Self: w[0].name, PeerName: w[1].name, Local: w[0].data, PeerData: published(w[1].data, true), Peer: p, Claim: c, Served: served}
					without := Decide(in)
					l, pd := in.Local, in.PeerData
					tie := p == PeerReady && (l.Present && l.outOfService() == "" && pd.Present && l.ClusterID == pd.ClusterID && Compare(l, pd) == 0 ||
						!l.Present && pd.Known && !pd.Present)
					for _, own := range etcdVersions {
						for _, peers := range etcdVersions {
							in.EtcdVersion, in.PeerEtcdVersion = own, peers
							got := Decide(in)
							// On a tie the versions only choose which node waits for the other.
							mirror := (got.Action == Wait) != (without.Action == Wait)
							if got.Action != without.Action && !(tie && mirror) {
								t.Errorf("%+v beside %s %+v, claim %s, served %x, etcd %q beside %q: %s (%s), want %s (%s) as without versions",
									w[0].data, p, w[1].data, c, served, own, peers, got.Action, got.Reason, without.Action, without.Reason)
							}
						}
					}
				}
			}
		}
	}
}

// Member IDs of the pair tests: node1's and node2's members of clusterC, and a third (a member
// node2 held before it was forced out and rejoined, or one of another membership).
const member1, member2, member3 = 0x11, 0x22, 0x33

// pairWorld is two nodes back from a cold boot, both with voters' data of clusterC whose
// membership is the two of them, and both pairs published: every decision starts both. Each test
// changes one thing from it.
type pairWorld struct {
	data     [2]Data
	pairs    [2]Pair // as published, node1's then node2's
	claim    [2]Claim
	givenUp  [2]Data // what an administrator gave up on each node (the other's data)
	served   uint64
	peer     [2]Peer // how node1 sees node2, and node2 node1
	contract int
}

func coldPair() pairWorld {
	d1 := Data{Known: true, Present: true, ClusterID: clusterC, Index: 110, Term: 5, MemberID: member1, OtherVoter: member2}
	d2 := Data{Known: true, Present: true, ClusterID: clusterC, Index: 90, Term: 5, MemberID: member2, OtherVoter: member1}
	return pairWorld{data: [2]Data{d1, d2}, pairs: [2]Pair{{member1, member2}, {member2, member1}}, peer: [2]Peer{PeerReady, PeerReady}}
}

// views is what each node decides on: its own data, the other's published record, both pairs.
func (w pairWorld) views() [2]Input {
	names := [2]string{"node1", "node2"}
	var in [2]Input
	for i := range 2 {
		o := 1 - i
		in[i] = Input{Self: names[i], PeerName: names[o], Local: w.data[i], PeerData: published(w.data[o], true), Peer: w.peer[i],
			Claim: w.claim[i], GivenUp: w.givenUp[i], PeerGaveUp: w.givenUp[o], Served: w.served, Pair: w.pairs[i], PeerPair: w.pairs[o],
			PeerContract: w.contract}
		in[i].PeerData.MemberID, in[i].PeerData.OtherVoter = 0, 0 // records carry neither
	}
	return in
}

// TestStartBoth: two nodes back with voters of one two-member cluster start both members,
// newer and older data alike; each thing that breaks the pair's proof brings back the rules
// that stream (checked on node1, whose data is newer: it forces).
func TestStartBoth(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*pairWorld)
		want   [2]Action
	}{
		{"both voters of the pair", func(*pairWorld) {}, [2]Action{StartBoth, StartBoth}},
		{"same data", func(w *pairWorld) { w.data[1].Index = w.data[0].Index }, [2]Action{StartBoth, StartBoth}},
		{"older data of a later term", func(w *pairWorld) { w.data[1].Term = 6 }, [2]Action{StartBoth, StartBoth}},
		{"served this cluster", func(w *pairWorld) { w.served = clusterC }, [2]Action{StartBoth, StartBoth}},
		{"a claim left by node1", func(w *pairWorld) { w.claim = [2]Claim{ClaimSelf, ClaimPeer} }, [2]Action{StartBoth, StartBoth}},
		{"node2 published no pair", func(w *pairWorld) { w.pairs[1] = Pair{} }, [2]Action{ForceNewCluster, Wait}},
		{"node1 withdrew its pair", func(w *pairWorld) { w.pairs[0] = Pair{} }, [2]Action{ForceNewCluster, Wait}},
		{"node2's pair names another member", func(w *pairWorld) { w.pairs[1].Other = member3 }, [2]Action{ForceNewCluster, Wait}},
		{"node1's pair is not its data's", func(w *pairWorld) { w.data[0].OtherVoter = member3 }, [2]Action{ForceNewCluster, StartBoth}},
		{"node1's member is not its pair's", func(w *pairWorld) { w.data[0].MemberID = member3 }, [2]Action{ForceNewCluster, StartBoth}},
		{"one member ID on both (a copied data dir)", func(w *pairWorld) {
			w.data[1].MemberID, w.data[1].OtherVoter, w.pairs[1] = member1, member2, Pair{member1, member2}
		}, [2]Action{ForceNewCluster, Wait}},
		{"node2 is a learner", func(w *pairWorld) { w.data[1].Learner = true }, [2]Action{ForceNewCluster, Wait}},
		{"node2 left (removed)", func(w *pairWorld) { w.data[1].Removed = true }, [2]Action{ForceNewCluster, Wait}},
		{"node2 of another cluster", func(w *pairWorld) { w.data[1].ClusterID = clusterD }, [2]Action{Refuse, Refuse}},
		{"another cluster served", func(w *pairWorld) { w.served = clusterD }, [2]Action{Refuse, Wait}},
		{"node2's data given up on node1", func(w *pairWorld) { w.givenUp[0] = w.data[1] }, [2]Action{ForceNewCluster, Wait}},
		{"node1's data given up on node2", func(w *pairWorld) { w.givenUp[1] = w.data[0] }, [2]Action{ForceNewCluster, RestoreNewCluster}},
		{"node1 holds no data", func(w *pairWorld) { w.data[0] = Data{Known: true} }, [2]Action{Wait, ForceNewCluster}},
		{"peers absent", func(w *pairWorld) { w.peer = [2]Peer{PeerAbsent, PeerAbsent} }, [2]Action{ForceNewCluster, Refuse}},
		{"peers fenced", func(w *pairWorld) { w.peer = [2]Peer{PeerFenced, PeerFenced} }, [2]Action{ForceNewCluster, Refuse}},
		{"peers leaderless", func(w *pairWorld) { w.peer = [2]Peer{PeerLeaderless, PeerLeaderless} }, [2]Action{StartExisting, StartExisting}},
		{"node2's member starting, node1's not yet", func(w *pairWorld) { w.peer[0] = PeerUnknown }, [2]Action{StartBoth, StartBoth}},
		{"peers' members starting (port open, no status)", func(w *pairWorld) { w.peer = [2]Peer{PeerUnknown, PeerUnknown} }, [2]Action{StartBoth, StartBoth}},
		{"a member starting, no pair", func(w *pairWorld) { w.peer, w.pairs[1] = [2]Peer{PeerUnknown, PeerUnknown}, Pair{} }, [2]Action{Refuse, Refuse}},
		{"a contract this agent cannot read", func(w *pairWorld) { w.contract = contract.Version + 2 }, [2]Action{Wait, Wait}},
	} {
		w := coldPair()
		tc.change(&w)
		in := w.views()
		for i := range 2 {
			if d := Decide(in[i]); d.Action != tc.want[i] || d.Reason == "" {
				t.Errorf("%s: node%d %s (%s), want %s", tc.name, i+1, d.Action, d.Reason, tc.want[i])
			}
		}
	}
}

// pairChoices are the pairs node i may publish beside data d: none, its data's, pairs that name
// a member of another membership, and the pair of the two members whatever d is (stale, when d
// is of another membership).
func pairChoices(i int, d Data) []Pair {
	ids := [2]uint64{member1, member2}
	return []Pair{{}, {d.MemberID, d.OtherVoter}, {d.MemberID, member3}, {member3, d.OtherVoter}, {ids[i], ids[1-i]}}
}

// TestPairsChangeOnlyTheColdStart: in every world of two nodes' data (each a voter of the two of
// them, or not), with every pair each may publish, every claim and served cluster and every way
// the nodes see each other, the decision is the one without pairs wherever a node does not start
// both (its reason may differ); and where the two see each other ready or starting (a port
// without a status) and each pair is its data's or none, node1 starts both exactly when node2
// does.
func TestPairsChangeOnlyTheColdStart(t *testing.T) {
	var views [][2]Peer
	for p := range Peer(len(peerNames)) {
		views = append(views, [2]Peer{p, p})
	}
	views = append(views, [2]Peer{PeerReady, PeerUnknown}, [2]Peer{PeerUnknown, PeerReady})
	starts := 0
	for _, w := range worlds() {
		var data [2]Data
		for i, n := range w {
			data[i] = n.data
			if n.data.Present && !n.data.Learner && !n.data.Removed {
				data[i].MemberID, data[i].OtherVoter = []uint64{member1, member2}[i], []uint64{member2, member1}[i]
			}
		}
		for _, p1 := range pairChoices(0, data[0]) {
			for _, p2 := range pairChoices(1, data[1]) {
				for c := range Claim(len(claimNames)) {
					for _, served := range []uint64{0, clusterC, clusterD} {
						for _, seen := range views {
							pw := pairWorld{data: data, pairs: [2]Pair{p1, p2}, peer: seen, served: served}
							pw.claim = [2]Claim{c, [3]Claim{ClaimNone, ClaimPeer, ClaimSelf}[c]}
							in := pw.views()
							var got [2]Decision
							for i := range 2 {
								got[i] = Decide(in[i])
								without := in[i]
								without.Pair, without.PeerPair = Pair{}, Pair{}
								if want := Decide(without); got[i].Action != StartBoth && (got[i].Action != want.Action || got[i].ReleaseClaim != want.ReleaseClaim) {
									t.Errorf("%+v, pairs %v %v, claim %s, served %x, seen %v: node%d %s (%s), want %s (%s) as without pairs",
										data, p1, p2, c, served, seen, i+1, got[i].Action, got[i].Reason, want.Action, want.Reason)
								}
							}
							if got[0].Action == StartBoth {
								starts++
							}
							own := func(i int, p Pair) bool { return p == Pair{} || p == Pair{data[i].MemberID, data[i].OtherVoter} }
							comingBack := func(p Peer) bool { return p == PeerReady || p == PeerUnknown }
							if own(0, p1) && own(1, p2) && comingBack(seen[0]) && comingBack(seen[1]) &&
								(got[0].Action == StartBoth) != (got[1].Action == StartBoth) {
								t.Errorf("%+v, pairs %v %v, claim %s, served %x, seen %v: node1 %s (%s), node2 %s (%s): one starts both alone",
									data, p1, p2, c, served, seen, got[0].Action, got[0].Reason, got[1].Action, got[1].Reason)
							}
						}
					}
				}
			}
		}
	}
	if starts == 0 {
		t.Fatal("no world starts both")
	}
}

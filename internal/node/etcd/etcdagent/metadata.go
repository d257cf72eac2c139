package etcdagent

import (
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdnode"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/ocf"
)

// MetaData is the agent's OCF meta-data document.
func MetaData() ([]byte, error) {
	agent := ocf.Agent{
		Name: "etcd", Version: "1.0",
		Shortdesc: "etcd on two nodes as a promotable clone",
		Longdesc: "Runs etcd on exactly two nodes. Unpromoted: etcd ready or catching up (not running yet, or a learner). " +
			"Promoted: a voting member serving clients. The node with the most recent data leads; the peer joins it as a " +
			"learner and is promoted when caught up. When Pacemaker reports the peer stopped or fenced, the survivor restarts " +
			"etcd as a cluster of one at once.",
		Parameters: etcdnode.Parameters,
	}
	for _, name := range []string{"start", "stop", "promote", "demote", "notify", "reload-agent", "validate-all"} {
		agent.Actions = append(agent.Actions, ocf.Action{Name: name, Timeout: actionsByName[name].timeout})
	}
	mon := actionsByName["monitor"].timeout
	agent.Actions = append(agent.Actions,
		ocf.Action{Name: "monitor", Timeout: mon, Interval: 10 * time.Second, Role: "Promoted"},
		ocf.Action{Name: "monitor", Timeout: mon, Interval: 11 * time.Second, Role: "Unpromoted"},
		ocf.Action{Name: "meta-data", Timeout: 5 * time.Second},
	)
	return agent.MetaData()
}

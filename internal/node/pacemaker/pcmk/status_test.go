package pcmk

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestParseStatusNodeAttributes: each node's attributes come from crm_mon's node attributes
// (--show-node-attributes), the shape crm_mon 2.1 prints, whatever their values.
func TestParseStatusNodeAttributes(t *testing.T) {
	xml := `<pacemaker-result api-version="2.25" request="crm_mon --output-as=xml">
  <summary><current_dc present="true" name="n2" with_quorum="true"/></summary>
  <nodes>
    <node name="n1" online="false" unclean="false" pending="false"/>
    <node name="n2" online="true" unclean="false" pending="false"/>
  </nodes>
  <node_attributes>
    <node name="n2">
      <attribute name="master-etcd" value="1000"/>
      <attribute name="tnf-etcd-decision" value="refuse: older data"/>
      <attribute name="tnf-layer-version" value="4.19.7-2"/>
      <attribute name="tnf-etcd-forced" value="not what the agent writes"/>
    </node>
  </node_attributes>
</pacemaker-result>`
	st, err := parseStatus([]byte(xml))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"master-etcd": "1000", "tnf-etcd-decision": "refuse: older data",
		"tnf-layer-version": "4.19.7-2", "tnf-etcd-forced": "not what the agent writes"}
	if len(st.Nodes) != 2 || st.Nodes[0].Attributes != nil || !reflect.DeepEqual(st.Nodes[1].Attributes, want) {
		t.Fatalf("nodes: %+v", st.Nodes)
	}
}

// TestFenceHistory: crm_mon 2.1's fence_event elements, a failure's exit reason, and completion
// times in UTC and in another zone (crm_time_as_string writes " +01:00" there, "Z" in UTC).
func TestFenceHistory(t *testing.T) {
	xml := `<pacemaker-result api-version="2.25" request="crm_mon --output-as=xml">
  <fence_history status="0">
    <fence_event action="reboot" target="n2" client="pacemaker-controld.1" origin="n1" status="failed" exit-reason="No route to host" delegate="n1" completed="2026-11-22 11:04:31 +01:00"/>
    <fence_event action="reboot" target="n2" client="pacemaker-controld.1" origin="n1" status="success" delegate="n1" completed="2026-11-22 09:58:02Z"/>
    <fence_event action="reboot" target="n2" client="pacemaker-controld.1" origin="n1" status="pending" extended-status="1"/>
  </fence_history>
</pacemaker-result>`
	st, err := parseStatus([]byte(xml))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Fencing) != 3 || st.Fencing[0].ExitReason != "No route to host" || st.Fencing[2].Status != "pending" {
		t.Fatalf("%+v", st.Fencing)
	}
	for i, want := range []string{"2026-11-22T10:04:31Z", "2026-11-22T09:58:02Z", ""} {
		at, ok := st.Fencing[i].CompletedAt()
		if got := map[bool]string{true: at.UTC().Format(time.RFC3339), false: ""}[ok]; got != want {
			t.Errorf("event %d completed %q, want %q", i, got, want)
		}
	}
}

// TestFenceHistoryQueries: the queries every reader of the history uses, on a history with two
// successes of n2 (out of order, as a cleaned and refilled history can be), a failure, a pending
// attempt, a success of n1, and an event whose time does not parse.
func TestFenceHistoryQueries(t *testing.T) {
	h := FenceHistory{
		{Target: "n2", Status: FenceSucceeded, Completed: "2026-11-22 09:00:00Z"},
		{Target: "n2", Status: FenceFailed, Completed: "2026-11-22 11:00:00Z"},
		{Target: "n2", Status: FenceSucceeded, Completed: "2026-11-22 10:00:00Z"},
		{Target: "n2", Status: FenceSucceeded, Completed: "soon"},
		{Target: "n1", Status: FenceSucceeded, Completed: "2026-11-22 12:00:00Z"},
	}
	if got := h.Successes("n2"); got != 3 {
		t.Errorf("Successes(n2) = %d, want 3 (every success counts, its time readable or not)", got)
	}
	at := func(hour int) time.Time { return time.Date(2026, 11, 22, hour, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		target   string
		notAfter time.Time
		want     time.Time
		ok       bool
	}{
		{"n2", time.Time{}, at(10), true}, // the latest, not the first listed; the failure is none
		{"n2", at(10), at(10), true},      // completed exactly at the bound counts
		{"n2", at(9).Add(-time.Second), time.Time{}, false},
		{"n2", at(9).Add(30 * time.Minute), at(9), true},
		{"n1", time.Time{}, at(12), true},
		{"n3", time.Time{}, time.Time{}, false},
	} {
		got, ok := h.LastSuccess(tc.target, tc.notAfter)
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("LastSuccess(%s, %v) = %v %v, want %v %v", tc.target, tc.notAfter, got, ok, tc.want, tc.ok)
		}
	}
	if h.Pending() {
		t.Error("Pending on a history without a running fencing")
	}
	if !append(h, FenceEvent{Target: "n1", Status: FencePending}).Pending() {
		t.Error("no Pending with a running fencing")
	}
	st := Status{Nodes: []NodeStatus{{Name: "n1"}, {Name: "n2"}}}
	if st.Peer("n1").Name != "n2" || st.Peer("n2").Name != "n1" || (Status{Nodes: []NodeStatus{{Name: "n1"}}}).Peer("n1").Name != "" {
		t.Error("Peer: want the other node, none when the status lists one")
	}
}

// TestParseStatusForMetrics: the node and resource flags, the cluster options and the node
// history (fail counts, migration thresholds) of crm_mon 2.1's XML, as ha_cluster_exporter reads
// them; a clone's stopped instance has no node.
func TestParseStatusForMetrics(t *testing.T) {
	xml := `<pacemaker-result api-version="2.25" request="crm_mon --output-as=xml">
  <summary>
    <current_dc present="true" version="2.1.5" name="n1" id="1" with_quorum="true"/>
    <cluster_options stonith-enabled="true" symmetric-cluster="true" no-quorum-policy="stop" maintenance-mode="false" stop-all-resources="false" stonith-timeout-ms="60000" priority-fencing-delay-ms="0"/>
  </summary>
  <nodes>
    <node name="n1" id="1" online="true" standby="false" standby_onfail="false" maintenance="false" pending="false" unclean="false" shutdown="false" expected_up="true" is_dc="true" resources_running="3" type="member"/>
    <node name="n2" id="2" online="false" standby="true" standby_onfail="false" maintenance="false" pending="false" unclean="true" shutdown="false" expected_up="false" is_dc="false" resources_running="0" type="member"/>
  </nodes>
  <resources>
    <resource id="fence-n2" resource_agent="stonith:fence_redfish" role="Started" active="true" orphaned="false" blocked="false" managed="true" failed="false" failure_ignored="false" nodes_running_on="1">
      <node name="n1" id="1" cached="true"/>
    </resource>
    <clone id="etcd-clone" multi_state="true" unique="false" maintenance="false" managed="true" disabled="false" failed="false" failure_ignored="false">
      <resource id="etcd" resource_agent="ocf:tnf:etcd" role="Promoted" active="true" orphaned="false" blocked="false" managed="true" failed="false" failure_ignored="false" nodes_running_on="1">
        <node name="n1" id="1" cached="true"/>
      </resource>
      <resource id="etcd" resource_agent="ocf:tnf:etcd" role="Stopped" active="false" orphaned="false" blocked="false" managed="true" failed="false" failure_ignored="false" nodes_running_on="0"/>
    </clone>
    <group id="g" number_resources="1" maintenance="false" managed="false" disabled="false">
      <resource id="vip" resource_agent="ocf:heartbeat:IPaddr2" role="Stopped" active="false" orphaned="false" blocked="true" managed="false" failed="false" failure_ignored="false" nodes_running_on="0"/>
    </group>
  </resources>
  <node_history>
    <node name="n1">
      <resource_history id="etcd" orphan="false" migration-threshold="1000000" fail-count="2" last-failure="Tue Nov 24 19:20:01 2026">
        <operation_history call="12" task="promote" rc="0" rc_text="ok" exec-time="310ms" queue-time="0ms"/>
      </resource_history>
      <resource_history id="kubelet" orphan="false" migration-threshold="3" fail-count="INFINITY"/>
    </node>
  </node_history>
</pacemaker-result>`
	st, err := parseStatus([]byte(xml))
	if err != nil {
		t.Fatal(err)
	}
	if !st.StonithEnabled {
		t.Error("stonith-enabled not read")
	}
	n1, n2 := st.Nodes[0], st.Nodes[1]
	if n1.Type != "member" || !n1.IsDC || !n1.ExpectedUp || n1.Standby || !n2.Standby || !n2.Unclean || n2.IsDC {
		t.Errorf("nodes: %+v", st.Nodes)
	}
	want := []ResourceRole{
		{ID: "etcd", Agent: "ocf:tnf:etcd", Role: "Stopped", Clone: "etcd-clone"},
		{ID: "etcd", Agent: "ocf:tnf:etcd", Role: "Promoted", Node: "n1", Clone: "etcd-clone", Active: true},
		{ID: "fence-n2", Agent: "stonith:fence_redfish", Role: "Started", Node: "n1", Active: true},
		{ID: "vip", Agent: "ocf:heartbeat:IPaddr2", Role: "Stopped", Group: "g", Unmanaged: true, Blocked: true},
	}
	if !reflect.DeepEqual(st.Resources, want) {
		t.Errorf("resources:\n got %+v\nwant %+v", st.Resources, want)
	}
	history := []ResourceHistory{{"n1", "etcd", 2, FailCountInfinity}, {"n1", "kubelet", FailCountInfinity, 3}}
	if !reflect.DeepEqual(st.History, history) {
		t.Errorf("history: %+v", st.History)
	}
	bad := strings.Replace(xml, `fail-count="2"`, `fail-count="two"`, 1)
	if _, err := parseStatus([]byte(bad)); err == nil || !strings.Contains(err.Error(), "node_history of n1, resource etcd") {
		t.Errorf("a bad fail count: %v", err)
	}
}

// TestParseStatusFailoverOff: what an administrator turns off, from crm_mon 2.1.5's own output
// for a CIB with maintenance-mode=true, stonith-enabled=false, a resource disabled and unmanaged
// and a clone disabled (an instance carries its clone's target_role and managed).
func TestParseStatusFailoverOff(t *testing.T) {
	xml := `<pacemaker-result api-version="2.25" request="crm_mon --one-shot --inactive --output-as=xml">
  <summary>
    <current_dc present="false"/>
    <cluster_options stonith-enabled="false" symmetric-cluster="true" no-quorum-policy="stop" maintenance-mode="true" stop-all-resources="false" stonith-timeout-ms="60000" priority-fencing-delay-ms="0"/>
  </summary>
  <nodes/>
  <resources>
    <resource id="d1" resource_agent="ocf:pacemaker:Dummy" role="Stopped" target_role="Stopped" active="false" orphaned="false" blocked="false" managed="false" failed="false" failure_ignored="false" nodes_running_on="0"/>
    <clone id="d2-clone" multi_state="false" unique="false" managed="false" disabled="true" failed="false" failure_ignored="false" target_role="Stopped">
      <resource id="d2" resource_agent="ocf:pacemaker:Dummy" role="Stopped" target_role="Stopped" active="false" orphaned="false" blocked="false" managed="false" failed="false" failure_ignored="false" nodes_running_on="0"/>
    </clone>
  </resources>
  <status code="0" message="OK"/>
</pacemaker-result>`
	st, err := parseStatus([]byte(xml))
	if err != nil {
		t.Fatal(err)
	}
	if st.StonithEnabled || !st.MaintenanceMode {
		t.Errorf("stonith-enabled %v, maintenance-mode %v; want false, true", st.StonithEnabled, st.MaintenanceMode)
	}
	want := []ResourceRole{
		{ID: "d1", Agent: "ocf:pacemaker:Dummy", Role: "Stopped", Unmanaged: true, TargetRole: "Stopped"},
		{ID: "d2", Agent: "ocf:pacemaker:Dummy", Role: "Stopped", Clone: "d2-clone", Unmanaged: true, TargetRole: "Stopped"},
	}
	if !reflect.DeepEqual(st.Resources, want) {
		t.Errorf("resources:\n got %+v\nwant %+v", st.Resources, want)
	}
}

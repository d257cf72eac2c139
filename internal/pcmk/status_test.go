package pcmk

import (
	"testing"
	"time"
)

// TestParseStatusNodeAttributes: the etcd agent's decision and layer version come from crm_mon's
// node attributes (--show-node-attributes), the shape crm_mon 2.1 prints.
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
    </node>
  </node_attributes>
</pacemaker-result>`
	st, err := parseStatus([]byte(xml))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Nodes) != 2 || st.Nodes[0].EtcdAgent != "" || st.Nodes[1].EtcdAgent != "refuse: older data" ||
		st.Nodes[0].LayerVersion != "" || st.Nodes[1].LayerVersion != "4.19.7-2" {
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

package pcmk

import "testing"

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

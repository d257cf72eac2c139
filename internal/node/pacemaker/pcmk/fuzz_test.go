package pcmk

import (
	"encoding/xml"
	"strings"
	"testing"
)

// FuzzMembership: whatever corosync-cmapctl and corosync-quorumtool print, the reading never
// panics, and a membership it returns shows this node joined: output it does not understand is
// an error, never a membership in which the peer is "not a member".
func FuzzMembership(f *testing.F) {
	f.Add(cmapNodelist, cmapRuntimeAlone, quorumtoolAlone)
	f.Add(cmapNodelist, "", "")
	f.Add(cmapNodelist, strings.Replace(cmapRuntimeAlone, "= joined", "= left", 1), quorumtoolAlone)
	f.Fuzz(func(t *testing.T, nodelist, runtime, quorumtool string) {
		m, err := membership(parseCmap(nodelist), parseCmap(runtime), quorumtool)
		if err != nil {
			return
		}
		joined := 0
		for _, j := range m.Nodes {
			if j {
				joined++
			}
		}
		if joined == 0 {
			t.Fatalf("a membership in which this node has not joined: %+v", m)
		}
	})
}

// statusWithAttribute is crm_mon's XML with one node attribute of the given value.
func statusWithAttribute(name, value string) []byte {
	var esc strings.Builder
	_ = xml.EscapeText(&esc, []byte(value))
	return []byte(`<pacemaker-result api-version="2.25" request="crm_mon --output-as=xml">
  <summary><current_dc present="true" name="n1" with_quorum="true"/></summary>
  <nodes><node name="n1" online="true" unclean="false" pending="false"/></nodes>
  <node_attributes><node name="n1"><attribute name="` + name + `" value="` + esc.String() + `"/></node></node_attributes>
</pacemaker-result>`)
}

// FuzzStatusAttribute: no attribute value, of the agent's or anyone's, stops crm_mon's output
// from being read (the fencing proof and auto-unblock read it), and each value is kept as written.
func FuzzStatusAttribute(f *testing.F) {
	f.Add("tnf-etcd-forced", "3 1764150000")
	f.Add("tnf-etcd-forced", "not what the agent writes")
	f.Add("tnf-etcd-data", "none")
	f.Fuzz(func(t *testing.T, name, value string) {
		if name == "" || strings.ContainsAny(name, "<>&\"' ") || !xmlText(name) || !xmlText(value) {
			return // not an attribute crm_mon can print
		}
		st, err := parseStatus(statusWithAttribute(name, value))
		if err != nil {
			t.Fatalf("attribute %s=%q: %v", name, value, err)
		}
		if got := st.Nodes[0].Attributes[name]; got != value {
			t.Fatalf("attribute %s: %q read as %q", name, value, got)
		}
	})
}

// xmlText says whether s can be an XML attribute value read back unchanged: valid characters,
// and no line ends or tabs, which attribute value normalization turns into spaces.
func xmlText(s string) bool {
	for _, r := range s {
		if r == '\t' || r == '\n' || r == '\r' || r == 0xFFFD || !(r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF) {
			return false
		}
	}
	return true
}

// FuzzParseStatus: any output of crm_mon is read or refused, never a panic.
func FuzzParseStatus(f *testing.F) {
	f.Add(statusWithAttribute("tnf-etcd-forced", "1 2"))
	f.Add([]byte(`<pacemaker-result><fence_history><fence_event action="reboot" target="n2" status="success" completed="2026-11-22 10:04:31Z"/></fence_history></pacemaker-result>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = parseStatus(data)
	})
}

// FuzzParseLinks: any corosync-cfgtool -s output is read without a panic.
func FuzzParseLinks(f *testing.F) {
	f.Add("Local node ID 1, transport knet\nLINK ID 0 udp\n\taddr\t= 192.168.77.1\n\tstatus:\n\t\tnodeid:          2:\tdisconnected\n")
	f.Fuzz(func(t *testing.T, out string) { _ = parseLinks(out) })
}

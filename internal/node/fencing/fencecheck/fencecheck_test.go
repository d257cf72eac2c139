package fencecheck

import "testing"

func TestVerdict(t *testing.T) {
	rows := map[string]string{
		"Status: ON\n": "Status: ON",
		"2026-11-22 02:15:43,943 ERROR: Unable to get PowerState: https://x/redfish/v1/Systems/1\n\n2026-11-22 02:15:43,943 ERROR: Please use '-h' for usage\n": "ERROR: Unable to get PowerState: https://x/redfish/v1/Systems/1",
		"": "(no output)",
	}
	for in, want := range rows {
		if got := verdict(in); got != want {
			t.Errorf("verdict(%q) = %q, want %q", in, got, want)
		}
	}
	if got := (Result{Check: "redfish", Detail: "401"}).String(); got != "redfish: FAILED: 401" {
		t.Error(got)
	}
}

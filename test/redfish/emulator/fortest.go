package emulator

import "testing"

// StartForTest starts an emulator for a test, on a free loopback port unless cfg names one, and
// closes it when the test ends.
func StartForTest(t testing.TB, cfg Config) *Emulator {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

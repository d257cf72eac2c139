package alerts

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"sigs.k8s.io/yaml"

	"github.com/tnf-layer/tnf-layer/internal/testutil/crdvalidate"
)

// TestPromtool: promtool (Debian's prometheus package) checks the rule file and runs
// testdata/alerts_test.yaml, each alert firing and not firing on series shaped as tnfctl metrics
// serves them.
func TestPromtool(t *testing.T) {
	dir := t.TempDir()
	rules, err := RuleFile()
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join("testdata", "alerts_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"rules.yaml": rules, "alerts_test.yaml": tests} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "alerts_test.yaml"}} {
		cmd := exec.Command("promtool", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
	// Every alert is tested.
	for _, a := range all {
		if !regexp.MustCompile(`alertname: ` + a.name + `\n`).Match(tests) {
			t.Errorf("%s has no test in testdata/alerts_test.yaml", a.name)
		}
	}
}

// TestPrometheusRuleRoundTrip: the PrometheusRule decodes strictly into prometheus-operator's
// v1 type and gives back the same object; the operator's CRD accepts it as the apiserver would.
func TestPrometheusRuleRoundTrip(t *testing.T) {
	want := PrometheusRule("0123456789abcdef0123456789abcdef01234567")
	data, err := yaml.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got monitoringv1.PrometheusRule
	if err := yaml.UnmarshalStrict(data, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&got, want) {
		t.Fatalf("round trip differs:\n%s", data)
	}
	if got.Kind != "PrometheusRule" || got.APIVersion != "monitoring.coreos.com/v1" || got.Namespace != Namespace {
		t.Errorf("%s %s in %q", got.APIVersion, got.Kind, got.Namespace)
	}
	crds, err := crdvalidate.PrometheusOperator()
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	if err := crds["PrometheusRule"].Validate(obj); err != nil {
		t.Error(err)
	}
}

// TestRunbooks: docs/runbooks.md has a section for every alert, and no section for an alert
// that does not exist.
func TestRunbooks(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "runbooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	var sections []string
	for _, m := range regexp.MustCompile(`(?m)^## (TNF\w+)$`).FindAllSubmatch(doc, -1) {
		sections = append(sections, string(m[1]))
	}
	var names []string
	for _, a := range all {
		names = append(names, a.name)
	}
	slices.Sort(sections)
	slices.Sort(names)
	if !slices.Equal(sections, names) {
		t.Errorf("docs/runbooks.md sections %v, alerts %v", sections, names)
	}
	// Each rule links its section (the heading's anchor) at the build's commit, names the
	// node's copy, and carries the namespace label.
	const commit = "0123456789abcdef0123456789abcdef01234567"
	for _, r := range Rules(commit) {
		want := "https://github.com/tnf-layer/tnf-layer/blob/" + commit + "/docs/runbooks.md#" + strings.ToLower(r.Alert)
		if r.Annotations["runbook_url"] != want || r.Labels["namespace"] != Namespace {
			t.Errorf("%s: runbook_url %q, namespace %q; want %q, %q", r.Alert, r.Annotations["runbook_url"], r.Labels["namespace"], want, Namespace)
		}
		if !strings.HasSuffix(r.Annotations["description"], "also on each node in /usr/share/doc/tnf-layer/runbooks.md.") {
			t.Errorf("%s: the description names no copy on the node: %q", r.Alert, r.Annotations["description"])
		}
	}
	if got := RunbookURL("", "TNFPeerMissing"); got != "https://github.com/tnf-layer/tnf-layer/blob/main/docs/runbooks.md#tnfpeermissing" {
		t.Errorf("without a commit: %q", got)
	}
}

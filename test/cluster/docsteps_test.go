//go:build integration

package cluster_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tnf-layer/tnf-layer/internal/node/handover"
	"github.com/tnf-layer/tnf-layer/internal/testutil/crdvalidate"
	"github.com/tnf-layer/tnf-layer/internal/testutil/doccheck"
	"github.com/tnf-layer/tnf-layer/internal/testutil/releasetest"
	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
	"github.com/tnf-layer/tnf-layer/test/kubeapi"
	"github.com/tnf-layer/tnf-layer/test/poll"
)

// notRunHere are the commands TestAdminStepsAsWritten does not run, by how they begin, with
// where they are tested instead. A command of the pages that neither runs here nor begins so
// fails the test: a new step is run, or says here why not.
var notRunHere = []elsewhere{
	{[]string{"make build"}, "the project's own build: the test runs the binaries it made"},
	{[]string{"bin/build-layer build "}, "pushes to registry.example.com, which no registry mirror stands in for " +
		"(containers' mirrors serve pulls only): the test renders the same manifests with --layer-image " +
		"instead; make lab builds and pushes the lab layer to a loopback registry, TestDryRun checks --ocp's inputs"},
	{[]string{"bin/build-layer verify "}, "reads the pushed layer back: make lab verifies the lab layer so"},
	{doccheck.InspectOnNode, "on a node, and changes nothing of the cluster: test/boot's TestPodmanRuntime runs it as " +
		"written on a booted node (make boot-smoke)"},
	{[]string{"tnfctl confirm-peer-down", "tnfctl accept-data-loss"}, "on a node, acting on a fault: the fault " +
		"scenarios run it (test/cluster scenarios_test.go, fencing_test.go, planned_test.go): without a terminal, as written, " +
		"it refuses with \"pass --yes\"; confirm-peer-down --yes acts (TestTwoFailures). At a terminal (util-linux's script), as written: TestFencingCannotComplete answers confirm-peer-down's " +
		"question no, then yes; TestAcceptDataLoss answers accept-data-loss's yes"},
	{[]string{"tnfctl auto-unblock"}, "on a node, acting on a fault: the scenarios run it with a shorter --gap, " +
		"exit 2 while the BMC does not prove the peer off (test/cluster scenarios_test.go, fencing_test.go)"},
	{[]string{"tnfctl start-empty"}, "on a node, giving the cluster's data up: TestStartEmpty (test/cluster startempty_test.go, " +
		"make cluster-test) runs it as written at a terminal, with the ID tnfctl status names, after both data dirs are gone"},
	{[]string{"rpm-ostree ", "systemctl reboot"}, "RHCOS's own, which cannot run here: test/boot's TestRollingUpdate " +
		"switches a node's OS with its stand-in (bootdisk.Deploy) between a clean poweroff and a power-on"},
	{[]string{"/usr/local/bin/cluster-backup.sh", "etcdctl "}, "a backup on a node: the operator's script needs its etcd scripts and " +
		"certificates there; the etcdctl snapshot save it runs, with etcd's client certificate, is how TestRestore and " +
		"TestRestoreResumes (test/cluster restore_test.go) take their snapshots, and what tnfctl restore accepts"},
	{[]string{"tnfctl fence-drill"}, "on a node, fencing its peer for real: TestFenceDrill (test/cluster drill_test.go) runs it on " +
		"each node in turn, after its refusals (no machine-config-daemon state, a rollout, and without a terminal \"pass --yes\")"},
	{[]string{"oc get pacemakercluster cluster", "oc get events -n openshift-etcd"}, "reads what the nodes publish, which a cluster " +
		"without Pacemaker does not: TestPublishStatusThroughFailover (test/cluster pacemakercluster_test.go, cluster-ci) " +
		"reads both through maintenance mode and a power cut, TestPublishStatus the object's rules and the credential's rights"},
	{[]string{"tnfctl restore"}, "on a node, replacing etcd's data: TestRestore runs it (its refusals, without a terminal: " +
		"\"pass --yes\"; with --yes, on a cluster taking writes through the API), TestRestoreResumes from each step after a power cut"},
}

// elsewhere: the commands that begin with one of prefixes are tested where says.
type elsewhere struct {
	prefixes []string
	where    string
}

// ocVerbs are the oc commands the pages may use: kubectl's own, which oc takes from
// k8s.io/kubectl (oc's pkg/cli/kubectlwrappers). kubectl of the cluster's Kubernetes release
// stands in for oc, which the Go module proxy does not serve (github.com/openshift/oc: 403); a
// page that uses one of oc's own commands (adm, debug, ...) fails the test instead.
var ocVerbs = []string{"annotate", "apply", "auth", "create", "delete", "get", "patch"}

// placeholders are what the pages write for a value the reader fills in; any other is an error.
var (
	placeholders     = strings.NewReplacer("<node>", "master-1")
	otherPlaceholder = regexp.MustCompile(`…|<[a-z][^>]*>`)
)

// The payload fixture's images, and the layer as a build would have pushed it, by digest.
const (
	fixtureRHCOS      = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	fixtureExtensions = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:2222222222222222222222222222222222222222222222222222222222222222"
	docLayerImage     = "registry.example.com/tnf/layer@sha256:7d3c0b9a6e5f41d28c4b17a9e0f3d6c25b8a1e4f7093c6d2a5b8e1f4c7d0a3b6"
)

// TestAdminStepsAsWritten: every command install.md, operate.md and runbooks.md give an
// administrator runs as the page writes it, in bash, in a checkout (the binaries make built,
// install.md's tnf.yaml example beside them), against the real kube-apiserver with OpenShift's
// own CRDs. What a command's comment or console block promises is checked: `oc auth can-i`'s
// yes and no, the number of objects, the removal guard's refusal word for word. Stand-ins,
// named: kubectl for oc (ocVerbs); a registry on loopback for quay.io, reached through
// registries.conf as a disconnected site mirrors it, holding a payload fixture of 4.19.7 (RHCOS
// cannot run here); ssh records what it would run on a node and the test checks it (a token
// piped to install-credential must be that node's account's: the API reviews it); MCO and the
// cluster-etcd-operator only where a command reads what they write (the pool's status, the
// handover's conditions).
func TestAdminStepsAsWritten(t *testing.T) {
	t.Parallel()
	cmds, err := doccheck.Commands(doccheck.Root(t), doccheck.AdminPages)
	if err != nil {
		t.Fatal(err)
	}
	s := newDocSite(t)
	ran := 0
	for _, c := range cmds {
		if i := slices.IndexFunc(notRunHere, func(e elsewhere) bool { return c.HasPrefix(e.prefixes) }); i >= 0 {
			t.Logf("not run here: %s: %s", c, notRunHere[i].where)
			continue
		}
		s.run(c)
		ran++
	}
	t.Logf("%d of %d commands ran as written; checked %v", ran, len(cmds), s.checked)
	for _, kind := range []string{"console output", "auth can-i's answer", "number of objects", "token reviewed", "the pool's watch"} {
		if s.checked[kind] == 0 {
			t.Errorf("no %s checked: the pages no longer give one, or say it otherwise", kind)
		}
	}
}

// docSite is where the pages' commands run: a checkout, its API and its registry.
type docSite struct {
	t      *testing.T
	work   string          // the checkout the commands run in: the repository's files, an out/ of its own
	env    []string        // PATH with the stand-ins first, KUBECONFIG an administrator's, HOME of its own
	sshLog string          // where the ssh stand-in records each call
	ssh    map[string]bool // the calls checked so far
	// checked counts the promises checked, by kind: a page that no longer makes one (its
	// comment reworded, its console block retyped) fails the test instead of passing unchecked.
	checked map[string]int
	admin   *kubernetes.Clientset
	dyn     dynamic.Interface
}

var (
	machineConfigPools = schema.GroupVersionResource{Group: "machineconfiguration.openshift.io", Version: "v1", Resource: "machineconfigpools"}
	// docCRDs are the CRDs of what the pages apply or read, in the openshift/api module.
	docCRDs = []string{
		"machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigs.crd.yaml",
		"machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigpools.crd.yaml",
		"operator/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigurations.crd.yaml",
		"operator/v1/zz_generated.crd-manifests/0000_12_etcd_01_etcds-Default.crd.yaml",
		"operator/v1/zz_generated.crd-manifests/0000_20_kube-apiserver_01_kubeapiservers.crd.yaml",
		"operator/v1/zz_generated.crd-manifests/0000_25_kube-controller-manager_01_kubecontrollermanagers.crd.yaml",
		"operator/v1/zz_generated.crd-manifests/0000_25_kube-scheduler_01_kubeschedulers.crd.yaml",
	}
	// controlPlaneOperators are the operators whose objects operate.md patches after a restore,
	// each one object named cluster, as OpenShift has them.
	controlPlaneOperators = map[string]string{"kubeapiservers": "KubeAPIServer", "kubecontrollermanagers": "KubeControllerManager",
		"kubeschedulers": "KubeScheduler"}
)

func newDocSite(t *testing.T) *docSite {
	t.Helper()
	dir := t.TempDir()
	s := &docSite{t: t, work: filepath.Join(dir, "checkout"), sshLog: filepath.Join(dir, "ssh"), ssh: map[string]bool{}, checked: map[string]int{}}
	api := startLoneAPI(t)
	cfg := api.Config("admin")
	s.admin = api.Client("admin")
	var err error
	if s.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	openshiftAPI, err := crdvalidate.OpenShiftAPIDir()
	if err != nil {
		t.Fatal(err)
	}
	prometheus, err := crdvalidate.PrometheusOperatorDir()
	if err != nil {
		t.Fatal(err)
	}
	var crds []string
	for _, f := range docCRDs {
		crds = append(crds, filepath.Join(openshiftAPI, f))
	}
	for _, f := range crdvalidate.PrometheusOperatorCRDs {
		crds = append(crds, filepath.Join(prometheus, f))
	}
	for _, f := range crds {
		if err := kubeapi.CreateCRD(ctx, cfg, f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if err := kubeapi.RegisterInfrastructure(ctx, cfg, configv1.DualReplicaTopologyMode); err != nil {
		t.Fatal(err)
	}
	// The namespaces OpenShift has.
	for _, ns := range []string{"openshift-etcd", handover.ServiceAccountNamespace, "openshift-machine-config-operator"} {
		if _, err := s.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.etcdHandedOver(ctx)
	for resource, kind := range controlPlaneOperators {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "operator.openshift.io/v1", "kind": kind,
			"metadata": map[string]any{"name": "cluster"}, "spec": map[string]any{"managementState": "Managed"}}}
		if _, err := s.dyn.Resource(schema.GroupVersionResource{Group: "operator.openshift.io", Version: "v1", Resource: resource}).
			Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.checkout(dir)
	registriesConf := s.mirrorRelease(dir)
	stand := filepath.Join(dir, "path")
	mkdir(t, stand)
	if err := os.Symlink(testbin.Path(t, "kubectl"), filepath.Join(stand, "oc")); err != nil {
		t.Fatal(err)
	}
	mkdir(t, s.sshLog)
	// ssh: each call's words one per line, and what came on its standard input. A token the page
	// pipes to a node lands in a file here (the test user's only, in the test's folder), where a
	// real ssh would have carried it to the node: the test must read it to review it.
	writeFile(t, filepath.Join(stand, "ssh"), []byte("#!/bin/bash\numask 077\nf=$(mktemp \"$TNF_SSH_LOG/call.XXXXXX\")\n"+
		"printf '%s\\n' \"$@\" > \"$f\"\ncat > \"$f.stdin\"\n"), 0o755)
	home := filepath.Join(dir, "home")
	mkdir(t, home)
	goenvOut, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	goenv := strings.Fields(string(goenvOut))
	s.env = []string{"PATH=" + stand + ":" + os.Getenv("PATH"), "HOME=" + home, "KUBECONFIG=" + api.Kubeconfig(t, dir, "admin"),
		"CONTAINERS_REGISTRIES_CONF=" + registriesConf, "TNF_SSH_LOG=" + s.sshLog,
		"GOCACHE=" + goenv[0], "GOMODCACHE=" + goenv[1], "GOPATH=" + goenv[2], "GOFLAGS=" + os.Getenv("GOFLAGS")}
	// What the build's --emit-manifests would have written (notRunHere says why it does not run).
	build := "bin/build-layer render --ocp 4.19 --release-image quay.io/openshift-release-dev/ocp-release:4.19.7-x86_64 " +
		"--node-config tnf.yaml --layer-image " + docLayerImage + " --dir out/build && ln -s build/manifests out/manifests"
	// The payload read is the fixture, through the mirror: quay.io would name other images.
	if out, errOut, code := s.bash(ctx, build); code != 0 || !strings.Contains(out, "rhel-coreos: "+fixtureRHCOS) {
		t.Fatalf("%s: exit %d, not the fixture's %s\n%s%s", build, code, fixtureRHCOS, out, errOut)
	}
	return s
}

// checkout is the repository as the build host has it: a copy of its files (go embeds no
// linked file), its .git, the binaries make built in bin/, an out/ of its own; with install.md's
// tnf.yaml example and the files it names beside it.
func (s *docSite) checkout(dir string) {
	t := s.t
	root := doccheck.Root(t)
	files, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(strings.TrimSuffix(string(files), "\x00"), "\x00") {
		src, dst := filepath.Join(root, f), filepath.Join(s.work, f)
		info, err := os.Stat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dst, data, info.Mode().Perm())
	}
	mkdir(t, filepath.Join(s.work, "out"))
	for link, target := range map[string]string{".git": filepath.Join(root, ".git"), "bin": testbin.Dir(t)} {
		if err := os.Symlink(target, filepath.Join(s.work, link)); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(s.work, "tnf.yaml"), []byte(doccheck.Example(t, "docs/install.md", "tnf.yaml")), 0o600)
	writeFile(t, filepath.Join(s.work, "master-0.password"), []byte("bmc-password-0\n"), 0o600)
	writeFile(t, filepath.Join(s.work, "master-1.password"), []byte("bmc-password-1\n"), 0o600)
	// The auth file install.md makes MCO's push secret from, as podman login writes it.
	writeFile(t, filepath.Join(s.work, "push-auth.json"), []byte(`{"auths":{"registry.example.com":{"auth":"`+
		base64.StdEncoding.EncodeToString([]byte("pusher:push-password"))+`"}}}`), 0o600)
	key := make([]byte, 256)
	rand.Read(key)
	writeFile(t, filepath.Join(s.work, "corosync-authkey"), key, 0o600)
}

// mirrorRelease puts a payload fixture of 4.19.7 into a registry on loopback and returns a
// registries.conf that mirrors quay.io's release repository there, as a disconnected site does.
func (s *docSite) mirrorRelease(dir string) string {
	t := s.t
	addr := releasetest.Registry(t)
	layout := filepath.Join(dir, "payload")
	releasetest.WritePayload(t, layout, "4.19.7", releasetest.ImageReferences(map[string]string{
		"rhel-coreos": fixtureRHCOS, "rhel-coreos-extensions": fixtureExtensions}))
	releasetest.Push(t, "oci:"+layout+":4.19.7", "docker://"+addr+"/openshift-release-dev/ocp-release:4.19.7-x86_64")
	conf := filepath.Join(dir, "registries.conf")
	writeFile(t, conf, fmt.Appendf(nil, "[[registry]]\nprefix = \"quay.io/openshift-release-dev\"\nlocation = \"quay.io/openshift-release-dev\"\n"+
		"[[registry.mirror]]\nlocation = \"%s/openshift-release-dev\"\ninsecure = true\n", addr), 0o644)
	return conf
}

// etcdHandedOver is the cluster-etcd-operator's Etcd object once the handover is done: what
// install.md's handover check reads.
func (s *docSite) etcdHandedOver(ctx context.Context) {
	etcds := s.dyn.Resource(handover.EtcdResource)
	created, err := etcds.Create(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "operator.openshift.io/v1", "kind": "Etcd",
		"metadata": map[string]any{"name": handover.EtcdName}, "spec": map[string]any{"managementState": "Managed"}}}, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	now := metav1.Now().UTC().Format(time.RFC3339)
	var conds []any
	for _, c := range []string{"ExternalEtcdReadyForTransition", "ExternalEtcdHasCompletedTransition"} {
		conds = append(conds, map[string]any{"type": c, "status": "True", "reason": "StandIn", "lastTransitionTime": now})
	}
	if err := unstructured.SetNestedSlice(created.Object, conds, "status", "conditions"); err != nil {
		s.t.Fatal(err)
	}
	if _, err := etcds.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		s.t.Fatal(err)
	}
}

// bash runs script in the checkout and returns what it printed on each stream and its exit code.
func (s *docSite) bash(ctx context.Context, script string) (stdout, stderr string, code int) {
	cmd := s.command(ctx, "bash", "-o", "pipefail", "-c", script)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		s.t.Fatalf("%s: %v\n%s%s", script, err, &out, &errOut)
	}
	return out.String(), errOut.String(), code
}

// command is name with args in the checkout, in a process group of its own: past ctx, the whole
// group (a pipeline's every process) is killed by its leader's PID.
func (s *docSite) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = s.work, s.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

var (
	ocVerb      = regexp.MustCompile(`(?:^|[\s|;(])oc\s+(\S+)`)
	numberWords = map[string]int{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
)

// run runs c as written (its placeholders filled in) and checks what it promises.
func (s *docSite) run(c doccheck.Command) {
	t := s.t
	t.Helper()
	for _, m := range ocVerb.FindAllStringSubmatch(c.Text, -1) {
		if !slices.Contains(ocVerbs, m[1]) {
			t.Errorf("%s: oc %s is not one of kubectl's commands, which stand in for oc's here (%v)", c, m[1], ocVerbs)
			return
		}
	}
	script := placeholders.Replace(c.Text)
	if p := otherPlaceholder.FindString(placeholders.Replace(c.Typed())); p != "" {
		t.Errorf("%s: %s is a placeholder this test does not fill in (placeholders)", c, p)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if strings.Contains(script, " -w") {
		s.watchPoolUpdated(ctx, c, script)
		return
	}
	if strings.HasPrefix(script, "oc delete machineconfig") && len(c.Output) > 0 {
		s.waitRemovalGuard(ctx)
	}
	out, errOut, code := s.bash(ctx, script)
	t.Logf("%s\n%s%s", c, out, errOut)
	comment := c.Comment()
	want := strings.Fields(comment)
	answer := strings.TrimSpace(out)
	switch {
	case len(c.Output) > 0:
		// A console block shows the terminal: both streams.
		s.checked["console output"]++
		if got := doccheck.OutputLines(out + errOut); !slices.Equal(got, c.Output) {
			t.Errorf("%s: printed\n%s%s\nthe page shows\n%s", c, out, errOut, strings.Join(c.Output, "\n"))
		}
	case strings.HasPrefix(script, "oc auth can-i") && len(want) > 0:
		s.checked["auth can-i's answer"]++
		page := strings.TrimSuffix(want[0], ":")
		if answer != page || (code == 0) != (page == "yes") {
			t.Errorf("%s: answered %q (exit %d), the page says %s", c, answer, code, page)
		}
	case len(want) > 1 && numberWords[want[0]] > 0 && want[1] == "objects":
		s.checked["number of objects"]++
		if n := len(strings.Split(answer, "\n")); code != 0 || n != numberWords[want[0]] {
			t.Errorf("%s: %d lines (exit %d), the page says %s", c, n, code, comment)
		}
	case code != 0:
		t.Errorf("%s: exit %d", c, code)
	}
	if calls := s.checkSSH(ctx, c); strings.Contains(script, "| ssh ") && calls == 0 {
		t.Errorf("%s: ssh never ran", c)
	}
}

// checkSSH checks what c had ssh run on a node since the last check: a token piped to
// install-credential authenticates as that node's account (kind node) or as the handover's,
// and the handover's service is started; nothing else. It returns how many calls it checked.
func (s *docSite) checkSSH(ctx context.Context, c doccheck.Command) int {
	t := s.t
	calls, err := filepath.Glob(filepath.Join(s.sshLog, "call.??????"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, call := range calls {
		if s.ssh[call] {
			continue
		}
		s.ssh[call] = true
		n++
		args, err := os.ReadFile(call)
		if err != nil {
			t.Fatal(err)
		}
		words := strings.Fields(string(args))
		if len(words) < 3 || !strings.HasPrefix(words[0], "core@") || words[1] != "sudo" {
			t.Errorf("%s: ssh %s: not `ssh core@NODE sudo COMMAND`", c, words)
			continue
		}
		node, remote := strings.TrimPrefix(words[0], "core@"), strings.Join(words[2:], " ")
		var account string
		switch remote {
		case "tnfctl install-credential node":
			account = "system:serviceaccount:openshift-etcd:tnf-node-" + node
		case "tnfctl install-credential handover":
			account = "system:serviceaccount:" + handover.ServiceAccountNamespace + ":" + handover.ServiceAccountName
		case "systemctl start tnf-handover.service":
			continue
		default:
			t.Errorf("%s: ssh %s: a node command this test does not know", c, words)
			continue
		}
		token, err := os.ReadFile(call + ".stdin")
		if err != nil {
			t.Fatal(err)
		}
		review, err := s.admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
			Spec: authenticationv1.TokenReviewSpec{Token: strings.TrimSpace(string(token))}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.checked["token reviewed"]++
		if !review.Status.Authenticated || review.Status.User.Username != account {
			t.Errorf("%s: ssh %s got the token of %q (authenticated %v), want %s's", c, words, review.Status.User.Username, review.Status.Authenticated, account)
		}
	}
	return n
}

// waitRemovalGuard waits until kube-apiserver applies the removal guard install.md applied (it
// compiles a policy in the background): asked with a dry run, which deletes nothing.
func (s *docSite) waitRemovalGuard(ctx context.Context) {
	mcs := s.dyn.Resource(kubeapi.MachineConfigResource)
	poll.Until(s.t, "the removal guard in effect", time.Minute, 200*time.Millisecond, func() (bool, string) {
		err := mcs.Delete(ctx, "99-master-tnf-os-image", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		// Forbidden, as the page shows; a policy's denial can also come as Invalid (its reason).
		return apierrors.IsForbidden(err) || apierrors.IsInvalid(err), fmt.Sprint("a dry-run delete: ", err)
	})
}

// watchPoolUpdated runs the pool's watch as written, with MCO's stand-in marking the pool
// updating, then updated, and waits until the watch prints it updated (UPDATED True); then the
// watch is stopped, as its reader would.
func (s *docSite) watchPoolUpdated(ctx context.Context, c doccheck.Command, script string) {
	t := s.t
	pools := s.dyn.Resource(machineConfigPools)
	pool, err := pools.Create(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "machineconfiguration.openshift.io/v1",
		"kind": "MachineConfigPool", "metadata": map[string]any{"name": "master"}, "spec": map[string]any{}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setPool := func(updated string) {
		t.Helper()
		not := map[string]string{"True": "False", "False": "True"}[updated]
		now := metav1.Now().UTC().Format(time.RFC3339)
		if err := unstructured.SetNestedSlice(pool.Object, []any{
			map[string]any{"type": "Updated", "status": updated, "lastTransitionTime": now, "reason": "", "message": ""},
			map[string]any{"type": "Updating", "status": not, "lastTransitionTime": now, "reason": "", "message": ""},
			map[string]any{"type": "Degraded", "status": "False", "lastTransitionTime": now, "reason": "", "message": ""}}, "status", "conditions"); err != nil {
			t.Fatal(err)
		}
		if pool, err = pools.UpdateStatus(ctx, pool, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setPool("False")
	cmd := s.command(ctx, "bash", "-c", "exec "+script)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		if errOut.Len() > 0 {
			t.Logf("%s: %s", c, &errOut)
		}
	}()
	lines := bufio.NewScanner(stdout)
	// The UPDATED column by its place in the header: an empty column (CONFIG) leaves no word.
	var from, to int
	var seen []string
	for lines.Scan() {
		line := lines.Text()
		seen = append(seen, line)
		if len(seen) == 1 {
			from, to = strings.Index(line, "UPDATED "), strings.Index(line, "UPDATING ")
			if from < 0 || to < from {
				t.Fatalf("%s: no UPDATED column before UPDATING in %q", c, line)
			}
			continue
		}
		if !strings.HasPrefix(line, "master ") || len(line) < to {
			continue
		}
		switch strings.TrimSpace(line[from:to]) {
		case "False":
			setPool("True")
		case "True":
			t.Logf("%s\n%s", c, strings.Join(seen, "\n"))
			s.checked["the pool's watch"]++
			return
		}
	}
	t.Errorf("%s: the watch ended without the pool updated:\n%s", c, strings.Join(seen, "\n"))
}

func mkdir(t *testing.T, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

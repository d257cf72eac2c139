package podman

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tnf-layer/tnf-layer/internal/node/etcd/etcdrun"
)

// The fixtures are the external-etcd pod of node master-0 in a two-node cluster (master-0
// 192.0.2.10, master-1 192.0.2.11) at revision 7, made the way the cluster-etcd-operator makes
// it: bindata/etcd/pod.gotpl.yaml rendered with the env of pkg/etcdenvvar (release-4.19, and
// the 4.21 shape, release-4.21's as main's: --feature-gates, --listen-client-http-urls,
// ETCD_MAX_LEARNERS, no --snapshot-count),
// reduced to its etcd container and written as JSON by
// pkg/operator/externaletcdsupportcontroller, with REVISION, NODE_NAME and NODE_ENVVAR_NAME
// filled in as the installer does.
var operatorManifests = map[string]struct {
	etcd  string   // the etcd minor version the release ships
	flags []string // etcd flags of that release's template the agent passes on
}{
	"testdata/external-etcd-pod-4.19.json": {"3.5", []string{"--experimental-initial-corrupt-check=true", "--snapshot-count=10000"}},
	"testdata/external-etcd-pod-4.21.json": {"3.6", []string{"--feature-gates=InitialCorruptCheck=true"}},
}

// fixtureImage is the etcd image the fixtures name (the release's, by digest).
const fixtureImage = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:5f2b8e4c1d9a7e3b6c0f8d2a4e6b9c1d3f5a7e9b2c4d6f8a0e1b3c5d7f9a2b4c"

// hostLayout writes the manifest with its host folders moved under a new root, and there the
// files the operator's installer leaves on a node: the certificates of etcd-all-certs, the CA
// bundles of etcd-all-bundles, the data folder. The revision folder etcd-pod-7 is absent, as
// after the operator pruned it.
func hostLayout(t *testing.T, manifest string) (root, moved string) {
	t.Helper()
	root = t.TempDir()
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var pod map[string]any
	if err := json.Unmarshal(data, &pod); err != nil {
		t.Fatal(err)
	}
	for _, v := range pod["spec"].(map[string]any)["volumes"].([]any) {
		if hp, ok := v.(map[string]any)["hostPath"].(map[string]any); ok {
			orig := hp["path"].(string)
			hp["path"] = root + orig
			if !revisionFolder.MatchString(filepath.Base(orig)) {
				if err := os.MkdirAll(root+orig, 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	certs := filepath.Join(root, "etc/kubernetes/static-pod-resources/etcd-certs")
	for _, f := range []string{
		"secrets/etcd-all-certs/etcd-serving-master-0.crt", "secrets/etcd-all-certs/etcd-serving-master-0.key",
		"secrets/etcd-all-certs/etcd-peer-master-0.crt", "secrets/etcd-all-certs/etcd-peer-master-0.key",
		"secrets/etcd-all-certs/etcd-serving-master-1.crt", "secrets/etcd-all-certs/etcd-peer-master-1.crt",
		"configmaps/etcd-all-bundles/server-ca-bundle.crt", "configmaps/etcd-all-bundles/metrics-ca-bundle.crt",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(certs, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(certs, f), []byte(f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	data, err = json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	moved = filepath.Join(certs, "configmaps/external-etcd-pod/pod.yaml")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(moved, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return root, moved
}

// podmanRun is a podman run command line taken apart.
type podmanRun struct {
	volumes    map[string]string // container path → host path
	env        map[string]string
	entrypoint string
	image      string
	etcd       []string // after the image
	options    []string
}

func parseRun(t *testing.T, args []string) podmanRun {
	t.Helper()
	r := podmanRun{volumes: map[string]string{}, env: map[string]string{}}
	for i, a := range args[1:] {
		switch {
		case strings.HasPrefix(a, "--volume="):
			parts := strings.Split(strings.TrimPrefix(a, "--volume="), ":")
			if _, dup := r.volumes[parts[1]]; dup {
				t.Errorf("two mounts on %s (podman refuses that)", parts[1])
			}
			r.volumes[parts[1]] = parts[0]
		case strings.HasPrefix(a, "--env="):
			k, v, _ := strings.Cut(strings.TrimPrefix(a, "--env="), "=")
			r.env[k] = v
		case strings.HasPrefix(a, "--entrypoint="):
			r.entrypoint = strings.TrimPrefix(a, "--entrypoint=")
		case strings.HasPrefix(a, "--"):
			r.options = append(r.options, a)
		default:
			r.image, r.etcd = a, args[i+2:]
			return r
		}
	}
	t.Fatalf("no image in %q", args)
	return r
}

// manifestTLS is the host paths of the TLS files of the manifest's etcd command.
func manifestTLS(t *testing.T, manifest string) *etcdrun.TLS {
	t.Helper()
	pod, err := LoadPod(manifest)
	if err != nil {
		t.Fatal(err)
	}
	tls, err := pod.TLS()
	if err != nil {
		t.Fatal(err)
	}
	return tls
}

// resolve is the podman command line launching s from the manifest, taken apart.
func resolve(t *testing.T, manifest string, s etcdrun.Spec) podmanRun {
	t.Helper()
	args, err := Runtime{Binary: "podman", Manifest: manifest, Container: "etcd"}.RunArgs(s)
	if err != nil {
		t.Fatal(err)
	}
	return parseRun(t, args)
}

// onHost is the host file behind a path in the container, through the run's mounts.
func (r podmanRun) onHost(path string) (string, bool) {
	var mounts []Mount
	for c, h := range r.volumes {
		mounts = append(mounts, Mount{Host: h, Container: c})
	}
	return mapPath(mounts, path, func(m Mount) (string, string) { return m.Container, m.Host })
}

// TestOperatorManifest resolves the podman command line for the operator's manifest on a node
// laid out as the installer leaves it, and checks it against the file system the container
// would see: every file etcd and etcdctl are told to open is there, no mount's source is
// missing, etcd is the program with flags only, no flag has its environment twin set, and the
// operator's own etcd settings the agent does not own come along.
func TestOperatorManifest(t *testing.T) {
	for manifest, release := range operatorManifests {
		t.Run(filepath.Base(manifest), func(t *testing.T) {
			root, moved := hostLayout(t, manifest)
			tls := manifestTLS(t, moved)
			certs := root + "/etc/kubernetes/static-pod-resources/etcd-certs/"
			if tls.CertFile != certs+"secrets/etcd-all-certs/etcd-serving-master-0.crt" ||
				tls.PeerKeyFile != certs+"secrets/etcd-all-certs/etcd-peer-master-0.key" ||
				tls.TrustedCAFile != certs+"configmaps/etcd-all-bundles/server-ca-bundle.crt" {
				t.Errorf("TLS from the manifest: %+v", *tls)
			}
			s := etcdrun.Spec{Name: "master-0", DataDir: root + "/var/lib/etcd",
				ClientURLs: []string{"https://192.0.2.10:2379"}, PeerURL: "https://192.0.2.10:2380",
				InitialCluster: map[string]string{"master-0": "https://192.0.2.10:2380", "master-1": "https://192.0.2.11:2380"},
				ClusterState:   "existing", TLS: tls}
			run := resolve(t, moved, s)
			if run.image != fixtureImage || run.entrypoint != "etcd" || len(run.etcd) == 0 || !strings.HasPrefix(run.etcd[0], "--") {
				t.Errorf("image %q entrypoint %q command %q: want the manifest's image running etcd with flags only", run.image, run.entrypoint, run.etcd)
			}
			for c, h := range run.volumes {
				if st, err := os.Stat(h); err != nil || !st.IsDir() {
					t.Errorf("mount %s:%s: source is not a folder on the host (%v)", h, c, err)
				}
			}
			flags := map[string]string{}
			for _, a := range run.etcd {
				name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				if _, dup := flags[name]; dup {
					t.Errorf("--%s given twice", name)
				}
				flags[name] = value
				if _, set := run.env[envTwin(name)]; set {
					t.Errorf("--%s and %s both set: etcd refuses to start", name, envTwin(name))
				}
			}
			opened := []string{flags["data-dir"]}
			for _, f := range []string{"cert-file", "key-file", "trusted-ca-file", "peer-cert-file", "peer-key-file", "peer-trusted-ca-file"} {
				opened = append(opened, flags[f])
			}
			for _, e := range []string{"ETCDCTL_CACERT", "ETCDCTL_CERT", "ETCDCTL_KEY"} {
				opened = append(opened, run.env[e])
			}
			for _, p := range opened {
				h, ok := run.onHost(p)
				if _, err := os.Stat(h); !ok || err != nil {
					t.Errorf("%s: not on any mount, or missing on the host (%v)", p, err)
				}
			}
			if !strings.HasPrefix(flags["cert-file"], "/etc/kubernetes/static-pod-certs/") {
				t.Errorf("--cert-file=%s: want the operator's path in the container", flags["cert-file"])
			}
			want := append([]string{"--logger=zap", "--log-level=info", "--metrics=extensive",
				"--listen-metrics-urls=https://0.0.0.0:9978", "--listen-client-urls=https://0.0.0.0:2379",
				"--advertise-client-urls=https://192.0.2.10:2379", "--name=master-0", "--data-dir=/var/lib/etcd"}, release.flags...)
			for _, w := range want {
				if !slices.Contains(run.etcd, w) {
					t.Errorf("etcd flags lack %s: %q", w, run.etcd)
				}
			}
			if _, ok := flags["listen-client-http-urls"]; ok {
				t.Errorf("--listen-client-http-urls passed: the monitor's JSON gateway would leave the client URL")
			}
			if !slices.Contains(run.options, "--oom-score-adj=-997") {
				t.Errorf("options %q lack --oom-score-adj=-997", run.options)
			}
			for _, kept := range []string{"ETCD_QUOTA_BACKEND_BYTES", "ETCD_HEARTBEAT_INTERVAL", "ETCD_CIPHER_SUITES", "ETCD_TLS_MIN_VERSION", "ETCDCTL_ENDPOINTS"} {
				if run.env[kept] == "" {
					t.Errorf("environment lacks the manifest's %s", kept)
				}
			}
			for _, owned := range []string{"ETCD_DATA_DIR", "ETCD_INITIAL_CLUSTER_STATE"} {
				if _, ok := run.env[owned]; ok {
					t.Errorf("environment has %s, which the agent owns", owned)
				}
			}
		})
	}
}

// TestPathsOutsideTheManifest: a data folder and certificates the manifest does not mount are
// mounted at their own paths, the certificates read-only.
func TestPathsOutsideTheManifest(t *testing.T) {
	_, moved := hostLayout(t, "testdata/external-etcd-pod-4.19.json")
	s := etcdrun.Spec{Name: "master-0", DataDir: "/srv/etcd", ClientURLs: []string{"https://[fd00::10]:2379"}, PeerURL: "https://[fd00::10]:2380",
		TLS: &etcdrun.TLS{CertFile: "/srv/pki/c", KeyFile: "/srv/pki/k", TrustedCAFile: "/srv/pki/ca", PeerCertFile: "/srv/pki/c", PeerKeyFile: "/srv/pki/k", PeerTrustedCAFile: "/srv/pki/ca"}}
	args, err := Runtime{Manifest: moved, Container: "etcd"}.RunArgs(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"--volume=/srv/etcd:/srv/etcd", "--volume=/srv/pki:/srv/pki:ro", "--cert-file=/srv/pki/c", "--data-dir=/srv/etcd", "--listen-client-urls=https://[::]:2379"} {
		if !slices.Contains(args, w) {
			t.Errorf("args lack %s: %q", w, args)
		}
	}
}

func TestBadManifest(t *testing.T) {
	dir := t.TempDir()
	rows := map[string]string{
		"no etcd container": `{"kind":"Pod","spec":{"containers":[{"name":"other","image":"x"}]}}`,
		"empty image":       "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: etcd\n",
		"not yaml":          "{",
		"unknown variable":  `{"kind":"Pod","spec":{"containers":[{"name":"etcd","image":"x","command":["/bin/sh","-c","exec etcd --name=${NODE_x_ETCD_NAME}"]}]}}`,
	}
	for name, body := range rows {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Runtime{Manifest: path}.RunArgs(etcdrun.Spec{})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v does not name the file", name, err)
		}
	}
	if _, err := (Runtime{Manifest: filepath.Join(dir, "missing.yaml")}).RunArgs(etcdrun.Spec{}); err == nil {
		t.Error("missing manifest accepted")
	}
	// Certificates the manifest names that are not on the node (not yet installed).
	_, moved := hostLayout(t, "testdata/external-etcd-pod-4.19.json")
	if err := os.Remove(filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(moved))), "secrets/etcd-all-certs/etcd-serving-master-0.key")); err != nil {
		t.Fatal(err)
	}
	pod, err := LoadPod(moved)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pod.TLS(); err == nil || !strings.Contains(err.Error(), "--key-file") || !strings.Contains(err.Error(), moved) {
		t.Errorf("missing key: error %v does not name the manifest and the flag", err)
	}
}

// TestBareFlag: a flag of the operator's command without a value is passed on without one (etcd
// refuses "--flag=" for a boolean).
func TestBareFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pod.yaml")
	pod := `{"kind":"Pod","spec":{"containers":[{"name":"etcd","image":"x","command":["/bin/sh","-c","exec etcd --enable-pprof --name=n"]}]}}`
	if err := os.WriteFile(path, []byte(pod), 0o600); err != nil {
		t.Fatal(err)
	}
	run := resolve(t, path, etcdrun.Spec{Name: "n", DataDir: "/d", ClientURLs: []string{"http://192.0.2.1:2379"}, PeerURL: "http://192.0.2.1:2380"})
	if !slices.Contains(run.etcd, "--enable-pprof") || slices.Contains(run.etcd, "--enable-pprof=") {
		t.Errorf("etcd flags %q: want a bare --enable-pprof", run.etcd)
	}
}

// The election timeout the container's etcd runs with comes from the operator's manifest: its
// environment (1000 ms on standard hardware, 2500 ms when the cluster's etcd is set to the
// slower hardware speed), or a flag of its command; both set is a manifest etcd refuses.
func TestElectionTimeoutFromTheManifest(t *testing.T) {
	dir := t.TempDir()
	for manifest := range operatorManifests {
		data, err := os.ReadFile(manifest)
		if err != nil {
			t.Fatal(err)
		}
		standard := `{"name":"ETCD_ELECTION_TIMEOUT","value":"1000"}`
		if !strings.Contains(string(data), standard) {
			t.Fatalf("%s: no %s", manifest, standard)
		}
		for _, c := range []struct {
			name, from, to string
			flag           bool // --election-timeout=3000 in the command
			want           time.Duration
			err            string
		}{
			{"standard hardware", standard, standard, false, time.Second, ""},
			{"slower hardware", standard, `{"name":"ETCD_ELECTION_TIMEOUT","value":"2500"}`, false, 2500 * time.Millisecond, ""},
			{"a flag", standard + ",", "", true, 3 * time.Second, ""},
			{"a flag and the environment", "", "", true, 0, "both set"},
		} {
			body := strings.Replace(string(data), c.from, c.to, 1)
			if c.flag {
				// A line of the script's command as the JSON holds it: a backslash, a newline.
				body = strings.Replace(body, `--log-level=info \\\n`, `--log-level=info \\\n  --election-timeout=3000 \\\n`, 1)
			}
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+"-"+filepath.Base(manifest))
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := Runtime{Manifest: path}.ElectionTimeout(etcdrun.Spec{Name: "master-0"})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), path) {
					t.Errorf("%s, %s: err %v, want one naming %q and the file", manifest, c.name, err, c.err)
				}
				continue
			}
			if err != nil || got != c.want {
				t.Errorf("%s, %s: %v, %v; want %v", manifest, c.name, got, err, c.want)
			}
		}
	}
}

// standInPodman writes a stand-in for podman (podman is not on the test machines) that answers
// `container exists` with exists's documented exit code (0 yes, 1 no, 125 podman's own
// error) and `container inspect` with running.
func standInPodman(t *testing.T, exists int, running string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "podman")
	script := fmt.Sprintf(`#!/bin/sh
case "$2" in
exists) [ %d -eq 125 ] && echo "Error: database is locked" >&2; exit %d ;;
inspect) echo %s ;;
esac
`, exists, exists, running)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunningTellsPodmanErrors: only "no such container" is "not running"; podman's own failure
// is an error, never a running etcd reported as stopped.
func TestRunningTellsPodmanErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		exists  int
		running string
		want    bool
		err     bool
	}{
		{"running", 0, "true", true, false},
		{"stopped", 0, "false", false, false},
		{"no such container", 1, "", false, false},
		{"podman's storage locked", 125, "", false, true},
	} {
		rt := Runtime{Binary: standInPodman(t, tc.exists, tc.running), Container: "etcd"}
		got, err := rt.Running(context.Background())
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%s: running %v, err %v; want %v, error %v", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// TestRunningReadsTheMainProcess: once Start has recorded the container's main process (podman
// inspect's State.Pid, here a real process the test started), whether etcd runs and when it exits
// are read from the kernel, never from podman, whose every other command fails here as a locked
// storage does; once Stop removed the container, podman is asked again.
func TestRunningReadsTheMainProcess(t *testing.T) {
	main := exec.Command("sleep", "60")
	if err := main.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = main.Process.Kill(); _ = main.Wait() })
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	podman := filepath.Join(dir, "podman")
	script := fmt.Sprintf(`#!/bin/sh
echo "$1 $2" >> %s
case "$1 $2" in
run*|stop*|rm*) exit 0 ;;
"container inspect") echo %d; exit 0 ;;
esac
echo "Error: database is locked" >&2
exit 125
`, calls, main.Process.Pid)
	if err := os.WriteFile(podman, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	asked := func() []string {
		data, _ := os.ReadFile(calls)
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	_, moved := hostLayout(t, "testdata/external-etcd-pod-4.19.json")
	rt := Runtime{Binary: podman, Manifest: moved, Container: "etcd", Main: etcdrun.Process{PIDFile: filepath.Join(dir, "etcd.pid")}}
	ctx := context.Background()
	if err := rt.Start(ctx, etcdrun.Spec{Name: "master-0", DataDir: filepath.Join(dir, "data")}); err != nil {
		t.Fatal(err)
	}
	if got := asked(); !slices.Equal(got, []string{"run --detach", "container inspect"}) {
		t.Fatalf("Start asked podman %q", got)
	}
	if running, err := rt.Running(ctx); !running || err != nil {
		t.Fatalf("with its main process alive: running %v, %v", running, err)
	}
	if err := main.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = main.Wait()
	if running, err := rt.Running(ctx); running || err != nil {
		t.Fatalf("with its main process gone: running %v, %v", running, err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rt.Wait(waitCtx); err != nil {
		t.Fatalf("Wait on an exited main process: %v", err)
	}
	if got := asked(); len(got) != 2 {
		t.Fatalf("Running and Wait asked podman: %q", got[2:])
	}
	if err := rt.Stop(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Running(ctx); err == nil || !strings.Contains(err.Error(), "database is locked") {
		t.Fatalf("after Stop, without a record, Running did not ask podman: %v (%q)", err, asked())
	}
}

package etcdrun

import (
	"reflect"
	"strings"
	"testing"
)

func TestSpecArgs(t *testing.T) {
	s := Spec{
		Name: "node1", DataDir: "/var/lib/etcd",
		ClientURLs: []string{"https://[fd00::1]:2379"}, PeerURL: "https://[fd00::1]:2380",
		InitialCluster: map[string]string{"node2": "https://[fd00::2]:2380", "node1": "https://[fd00::1]:2380"},
		ClusterState:   "existing", ForceNewCluster: true,
		TLS: &TLS{CertFile: "/c", KeyFile: "/k", TrustedCAFile: "/ca", PeerCertFile: "/pc", PeerKeyFile: "/pk", PeerTrustedCAFile: "/pca"},
	}
	want := []string{
		"--name=node1", "--data-dir=/var/lib/etcd",
		"--listen-client-urls=https://[fd00::1]:2379", "--advertise-client-urls=https://[fd00::1]:2379",
		"--listen-peer-urls=https://[fd00::1]:2380", "--initial-advertise-peer-urls=https://[fd00::1]:2380",
		"--initial-cluster=node1=https://[fd00::1]:2380,node2=https://[fd00::2]:2380", "--initial-cluster-state=existing",
		"--force-new-cluster",
		"--cert-file=/c", "--key-file=/k", "--trusted-ca-file=/ca", "--client-cert-auth",
		"--peer-cert-file=/pc", "--peer-key-file=/pk", "--peer-trusted-ca-file=/pca", "--peer-client-cert-auth",
	}
	if got := s.Args(); !reflect.DeepEqual(got, want) {
		t.Fatalf("args:\n got %q\nwant %q", got, want)
	}
	plain := Spec{Name: "n", DataDir: "/d", ClientURLs: []string{"http://127.0.0.1:2379"}, PeerURL: "http://127.0.0.1:2380"}
	for _, a := range plain.Args() {
		if strings.Contains(a, "initial-cluster") || strings.Contains(a, "force") || strings.Contains(a, "cert") {
			t.Errorf("unexpected flag %s", a)
		}
	}
}

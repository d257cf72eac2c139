//go:build boot

package boot_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/tnf-layer/tnf-layer/test/testca"
)

// What the cluster-etcd-operator leaves on a node for external etcd, in its layout
// (pkg/tlshelpers, pkg/etcdenvvar, bindata/etcd/pod.gotpl.yaml).
const (
	etcdCerts      = "/etc/kubernetes/static-pod-resources/etcd-certs"
	etcdAllCerts   = etcdCerts + "/secrets/etcd-all-certs"
	etcdCABundle   = etcdCerts + "/configmaps/etcd-all-bundles/server-ca-bundle.crt"
	etcdPodPath    = etcdCerts + "/configmaps/external-etcd-pod/pod.yaml"
	etcdPodVersion = "3" // the revision the manifest names; its folder etcd-pod-3 is absent (pruned)
	// installerStandIn puts this node's manifest in place before Pacemaker starts.
	installerStandIn   = "tnf-lab-etcd-installer.service"
	installerManifests = "/var/lib/tnf-lab/external-etcd-pod"
)

// installEtcdPod is what the operator's installer does to the external-etcd-pod ConfigMap's
// pod.yaml when it copies it onto a node (library-go's installerpod, substituteConfigMap).
func installEtcdPod(configMapPod []byte, node, revision string) []byte {
	s := strings.ReplaceAll(string(configMapPod), "REVISION", revision)
	s = strings.ReplaceAll(s, "NODE_NAME", node)
	return []byte(strings.ReplaceAll(s, "NODE_ENVVAR_NAME", strings.NewReplacer("-", "_", ".", "_").Replace(node)))
}

// addOperatorEtcdFiles is a stand-in for the cluster-etcd-operator (no cluster runs here): it
// writes into the root file system the certificates of every node, signed by one CA as its
// etcd-signer signs them (serving and peer, client and server use, for the node's address and
// the loopback one), the CA bundle, each node's external-etcd pod manifest from
// testdata/external-etcd-pod.json (the ConfigMap's content, with the installer's placeholders),
// and a unit that puts the one of the booting node (by host name) where the installer puts it.
// It returns what the test's etcd clients present: a client certificate of that CA without
// addresses, as kube-apiserver's etcd-client certificate (etcd checks a client certificate's
// addresses, if it has any, against the address the client connects from).
func addOperatorEtcdFiles(rootfs string, nodeIPs map[string]string) (etcdClientCert, error) {
	configMapPod, err := os.ReadFile("testdata/external-etcd-pod.json")
	if err != nil {
		return etcdClientCert{}, err
	}
	ca, err := testca.New("etcd-signer (boot tests)")
	if err != nil {
		return etcdClientCert{}, err
	}
	for node, ip := range nodeIPs {
		for _, kind := range []string{"serving", "peer"} {
			cert, key, err := ca.Issue(node, net.ParseIP(ip), net.IPv4(127, 0, 0, 1))
			if err != nil {
				return etcdClientCert{}, err
			}
			name := fmt.Sprintf("etcd-%s-%s", kind, node)
			if err := writeRoot(rootfs, etcdAllCerts+"/"+name+".crt", cert, 0o600); err != nil {
				return etcdClientCert{}, err
			}
			if err := writeRoot(rootfs, etcdAllCerts+"/"+name+".key", key, 0o600); err != nil {
				return etcdClientCert{}, err
			}
		}
		if err := writeRoot(rootfs, installerManifests+"/"+node+".json", installEtcdPod(configMapPod, node, etcdPodVersion), 0o644); err != nil {
			return etcdClientCert{}, err
		}
	}
	if err := writeRoot(rootfs, etcdCABundle, ca.PEM(), 0o644); err != nil {
		return etcdClientCert{}, err
	}
	unit := fmt.Sprintf(`[Unit]
Description=Stand-in for the cluster-etcd-operator's installer (boot tests): this node's external-etcd pod
Before=pacemaker.service

[Service]
Type=oneshot
ExecStart=/usr/bin/install -D -m 0644 %s/%%H.json %s

[Install]
WantedBy=multi-user.target
`, installerManifests, etcdPodPath)
	if err := writeRoot(rootfs, "/etc/systemd/system/"+installerStandIn, []byte(unit), 0o644); err != nil {
		return etcdClientCert{}, err
	}
	wants := filepath.Join(rootfs, "etc/systemd/system/multi-user.target.wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		return etcdClientCert{}, err
	}
	if err := os.Symlink("../"+installerStandIn, filepath.Join(wants, installerStandIn)); err != nil && !os.IsExist(err) {
		return etcdClientCert{}, err
	}
	// kubelet's static pod folder, which every OpenShift node has and the manifest mounts.
	if err := os.MkdirAll(filepath.Join(rootfs, "etc/kubernetes/manifests"), 0o755); err != nil {
		return etcdClientCert{}, err
	}
	cert, key, err := ca.Issue("etcd-client (boot tests)")
	return etcdClientCert{CA: ca.PEM(), Cert: cert, Key: key}, err
}

// etcdClientCert is an etcd client's certificate, its key and the CA it trusts, in PEM.
type etcdClientCert struct{ CA, Cert, Key []byte }

func (c etcdClientCert) tlsConfig() (*tls.Config, error) {
	pair, err := tls.X509KeyPair(c.Cert, c.Key)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.CA)
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool}, nil
}

func writeRoot(rootfs, path string, data []byte, mode os.FileMode) error {
	dst := filepath.Join(rootfs, path)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, mode)
}

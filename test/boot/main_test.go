//go:build boot

// Package boot_test boots the lab layer that `make lab` built and pushed on two QEMU machines
// (TCG): the image is pulled from the registry, unpacked, given the node configuration
// MachineConfig's Ignition files, and made into an ext4 disk; each machine's power belongs to
// bin/redfish-emulator's qemu backend, so the fence agents inside one guest really power the
// other off. The guests run real systemd, Corosync, Pacemaker and etcd; cri-o and kubelet are
// the lab base's stand-in units. The test reaches the guests over SSH on a loopback port
// forward, with a key it adds to the disk (test access, not part of the node configuration).
package boot_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containers/image/v5/types"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"golang.org/x/crypto/ssh"
	"sigs.k8s.io/yaml"

	"github.com/tnf-layer/tnf-layer/internal/build/imageread"
	"github.com/tnf-layer/tnf-layer/internal/build/layerdef"
	"github.com/tnf-layer/tnf-layer/internal/build/manifests"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/testutil/bootdisk"
)

// labImage is the disk every test's machines start from, made once.
type labImage struct {
	repo, bin string
	dir       string // removed at the end
	disk      string // raw ext4, the machines' qcow2 overlays point at it
	boot      bootdisk.Boot
	digest    string
	signer    ssh.Signer
	key       []byte // the signer's private key in OpenSSH form, for a person to log in
	cluster   string // out/lab-cluster: tnf.yaml and the BMC passwords
	rootfs    string // the disk's root file system
	// What the update tests start from: out/lab/build.json's base (in the build store), pushed
	// image, version and node configuration MachineConfig, and the test's authorized key.
	base, pushed, version, nodeConfig string
	authorizedKey                     string

	treesMu sync.Mutex
	trees   map[string]string // unpacked images by name (update_test.go)

	podmanOnce sync.Once
	podman     string            // the podman variant's disk, made by podmanDisk
	podmanTLS  *tls.Config       // what the test's etcd clients present to its etcd
	etcdClient etcdClientCert    // the same, in PEM
	nodeIPs    map[string]string // the nodes' addresses, as tnf.yaml has them
	podmanErr  error

	installedOnce sync.Once
	installed     string // the podman disk as the installer leaves it, made by installedDisk
	installedErr  error
}

// podmanDisk is the lab disk with the node configuration of a site whose etcd runs in podman:
// out/lab-cluster/tnf.yaml plus the etcd agent's podman runtime, rendered into a MachineConfig
// by build-layer's own code and applied like the first one, and what the cluster-etcd-operator
// would leave on the nodes (addOperatorEtcdFiles: its external-etcd pod manifest naming the
// etcd image the lab layer preloads, with TLS on, and the certificates in its layout).
func (img *labImage) podmanDisk(t testing.TB) string {
	img.podmanOnce.Do(func() { img.podman, img.podmanErr = img.makePodmanDisk() })
	if img.podmanErr != nil {
		t.Fatal(img.podmanErr)
	}
	return img.podman
}

func (img *labImage) makePodmanDisk() (string, error) {
	began := time.Now()
	data, err := os.ReadFile(filepath.Join(img.cluster, "tnf.yaml"))
	if err != nil {
		return "", err
	}
	var tnf map[string]any
	if err := yaml.Unmarshal(data, &tnf); err != nil {
		return "", err
	}
	// liveness_timeout: a TCG guest with one vCPU runs etcd in podman many times slower than real
	// hardware, and a status read once took over the 2 s default while a unit started beside it
	// (the monitor then found etcd "frozen" and restarted it); the default stays calibrated for
	// real hardware (a slowest read of 78 ms under heavy load, README).
	tnf["resources"] = map[string]any{"etcd": map[string]string{"runtime": "podman", "liveness_timeout": "6"}}
	if data, err = yaml.Marshal(tnf); err != nil {
		return "", err
	}
	// Beside the original: its BMC password files are named relative to it.
	path := filepath.Join(img.cluster, ".tnf-podman.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", err
	}
	defer os.Remove(path)
	in, err := clusterconfig.LoadTNF(path)
	if err != nil {
		return "", err
	}
	mc, err := manifests.NodeConfig("master", in, layerdef.LabIgnition)
	if err != nil {
		return "", err
	}
	// The first node configuration's files all live in /etc/tnf: without it, the root file
	// system is the image's again, onto which Ignition writes (it overwrites nothing).
	if err := os.RemoveAll(filepath.Join(img.rootfs, "etc/tnf")); err != nil {
		return "", err
	}
	if err := bootdisk.ApplyIgnition(mc.Spec.Config.Raw, img.rootfs, "podman node configuration"); err != nil {
		return "", err
	}
	img.nodeIPs = map[string]string{}
	for _, n := range in.Config.Nodes {
		img.nodeIPs[n.Name] = n.IP
	}
	if img.etcdClient, err = addOperatorEtcdFiles(img.rootfs, img.nodeIPs); err != nil {
		return "", err
	}
	if img.podmanTLS, err = img.etcdClient.tlsConfig(); err != nil {
		return "", err
	}
	disk := filepath.Join(img.dir, "lab-podman.raw")
	if err := bootdisk.MakeExt4(context.Background(), img.rootfs, disk, 4<<30, "root"); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "boot tests: podman variant's disk made in %v\n", time.Since(began).Round(time.Second))
	return disk, nil
}

var image labImage

func TestMain(m *testing.M) {
	code := 1
	if v := os.Getenv("TNF_BOOT_INERT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			fmt.Fprintln(os.Stderr, "boot tests: TNF_BOOT_INERT:", err)
			os.Exit(2)
		}
		inertFor = d
	}
	err := prepare(&image)
	if err != nil {
		fmt.Fprintln(os.Stderr, "boot tests:", err)
	} else {
		code = m.Run()
	}
	if image.dir != "" {
		os.RemoveAll(image.dir)
	}
	os.Exit(code)
}

// prepare pulls the pushed lab layer and makes its disk.
func prepare(img *labImage) error {
	began := time.Now()
	repo, err := filepath.Abs("../..")
	if err != nil {
		return err
	}
	img.repo, img.bin, img.cluster = repo, os.Getenv("TNF_BIN"), filepath.Join(repo, "out/lab-cluster")
	if img.bin == "" {
		return fmt.Errorf("TNF_BIN is not set (make boot-test sets it)")
	}
	var build struct {
		Base      string   `json:"base"`
		Pushed    string   `json:"pushed"`
		Version   string   `json:"version"`
		Manifests []string `json:"manifests"`
	}
	buildJSON := filepath.Join(repo, "out/lab/build.json")
	data, err := os.ReadFile(buildJSON)
	if err != nil {
		return fmt.Errorf("%w (make lab builds and pushes the lab layer first)", err)
	}
	if err := json.Unmarshal(data, &build); err != nil {
		return fmt.Errorf("%s: %w", buildJSON, err)
	}
	if img.dir, err = os.MkdirTemp("/var/tmp", "tnf-boot-"); err != nil {
		return err
	}
	rootfs := filepath.Join(img.dir, "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		return err
	}
	if img.digest, err = pull(repo, build.Pushed, rootfs); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(rootfs, "usr/sbin/sshd")); err != nil {
		return fmt.Errorf("the lab image has no sshd: its base predates the boot tests (build-layer lab-base --rebuild, then make lab)")
	}
	nodeConfig := ""
	for _, m := range build.Manifests {
		if strings.HasSuffix(m, "-tnf-node-config.yaml") {
			nodeConfig = m
		}
	}
	if nodeConfig == "" {
		return fmt.Errorf("%s: manifests: no node configuration MachineConfig (make lab writes one from out/lab-cluster/tnf.yaml)", buildJSON)
	}
	img.base, img.pushed, img.version, img.nodeConfig = build.Base, build.Pushed, build.Version, nodeConfig
	if img.signer, img.key, img.authorizedKey, err = newTestKey(); err != nil {
		return err
	}
	if err := configure(rootfs); err != nil {
		return err
	}
	boot, err := bootdisk.FindBoot(rootfs)
	if err != nil {
		return err
	}
	img.boot = bootdisk.Boot{Kernel: filepath.Join(img.dir, "vmlinuz"), Initrd: filepath.Join(img.dir, "initrd.img")}
	for src, dst := range map[string]string{boot.Kernel: img.boot.Kernel, boot.Initrd: img.boot.Initrd} {
		if err := copyFile(src, dst); err != nil {
			return err
		}
	}
	img.disk = filepath.Join(img.dir, "lab.raw")
	if err := bootdisk.MakeExt4(context.Background(), rootfs, img.disk, 4<<30, "root"); err != nil {
		return err
	}
	// The root file system stays (removed with img.dir) for the podman variant's disk.
	img.rootfs = rootfs
	fmt.Fprintf(os.Stderr, "boot tests: lab layer %s unpacked, configured and made into a disk in %v\n",
		img.digest, time.Since(began).Round(time.Second))
	return nil
}

// pull serves out/registry on a free loopback port for as long as the unpacking takes, and
// unpacks the pushed image (by digest) into rootfs.
func pull(repo, pushed, rootfs string) (string, error) {
	_, rest, ok := strings.Cut(pushed, "docker://")
	name, digest, ok2 := strings.Cut(rest, "@")
	if !ok || !ok2 {
		return "", fmt.Errorf("out/lab/build.json: pushed: %q is not a docker://HOST/NAME@DIGEST reference", pushed)
	}
	_, path, _ := strings.Cut(name, "/")
	addr, err := freePort("tcp")
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "tnf-boot-registry-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	conf := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("version: 0.1\nlog: {level: error}\nstorage: {filesystem: {rootdirectory: %s}, maintenance: {readonly: {enabled: true}}}\nhttp: {addr: %s}\n",
		filepath.Join(repo, "out/registry/data"), addr)), 0o644); err != nil {
		return "", err
	}
	reg := exec.Command("docker-registry", "serve", conf)
	reg.Stdout, reg.Stderr = io.Discard, io.Discard
	if err := reg.Start(); err != nil {
		return "", fmt.Errorf("docker-registry: %w", err)
	}
	defer func() { _ = reg.Process.Kill(); _ = reg.Wait() }()
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if i == 100 {
			return "", fmt.Errorf("docker-registry did not listen on %s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ref, err := imageread.ParseReference("docker://" + addr + "/" + path + "@" + digest)
	if err != nil {
		return "", err
	}
	sys := &types.SystemContext{DockerInsecureSkipTLSVerify: types.OptionalBoolTrue}
	return bootdisk.Unpack(context.Background(), ref, sys, rootfs)
}

// configure gives a root file system the node configuration and the test's access, as the
// installer's Ignition does on a node's first boot.
func configure(rootfs string) error {
	if err := applyMachineConfig(image.nodeConfig, rootfs); err != nil {
		return err
	}
	return addTestAccess(rootfs, image.authorizedKey)
}

// applyMachineConfig applies the MachineConfig's Ignition files to rootfs, as Ignition would.
func applyMachineConfig(path, rootfs string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var mc mcfgv1.MachineConfig
	if err := yaml.Unmarshal(data, &mc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return bootdisk.ApplyIgnition(mc.Spec.Config.Raw, rootfs, path)
}

// newTestKey makes the SSH key the tests log in with: its signer, its private key in OpenSSH
// form and its authorized_keys line.
func newTestKey() (ssh.Signer, []byte, string, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, "", err
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, nil, "", err
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, nil, "", err
	}
	block, err := ssh.MarshalPrivateKey(priv, "tnf boot tests")
	if err != nil {
		return nil, nil, "", err
	}
	return signer, pem.EncodeToMemory(block), strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub))), nil
}

// addTestAccess authorizes the test's key for root, through Ignition like the node configuration.
func addTestAccess(rootfs, authorizedKey string) error {
	cfg := map[string]any{
		"ignition": map[string]any{"version": "3.5.0"},
		"storage": map[string]any{
			"directories": []any{map[string]any{"path": "/root/.ssh", "mode": 0o700}},
			"files": []any{map[string]any{"path": "/root/.ssh/authorized_keys", "mode": 0o600,
				"contents": map[string]any{"source": "data:," + strings.ReplaceAll(authorizedKey, " ", "%20")}}},
		},
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	return bootdisk.ApplyIgnition(raw, rootfs, "test access")
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

// freePort returns a loopback address whose port was free a moment ago.
func freePort(network string) (string, error) {
	if network == "udp" {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		defer c.Close()
		return c.LocalAddr().String(), nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

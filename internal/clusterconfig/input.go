package clusterconfig

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/tnf-layer/tnf-layer/internal/base/certpool"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
)

// Secret is a file the MachineConfig writes with mode 0600.
type Secret struct {
	Path string
	Data []byte
}

// File is a file the MachineConfig writes with mode 0644.
type File = Secret

// Input is what build-layer reads: the project's tnf.yaml (cluster.yaml plus, per node, where to
// read the BMC password on the build machine) or an install-config.
type Input struct {
	Config  Config
	Secrets []Secret
	Files   []File
	// AuthkeyGenerated says the Corosync key is a new random one (no corosyncAuthkeyFile):
	// ReuseAuthkey replaces it with the one an earlier render gave the cluster.
	AuthkeyGenerated bool
}

// tnfFile is tnf.yaml: cluster.yaml's fields, with passwordFile naming a file on the build
// machine; the secret's path on the node is derived from the node name.
type tnfFile Config

func secretPath(node string) string { return SecretsDir + "/" + node + ".password" }

// LoadTNF reads tnf.yaml. Unknown fields are errors; errors name the file and the field.
func LoadTNF(path string) (Input, error) {
	var f tnfFile
	if err := readStrict(path, &f); err != nil {
		return Input{}, err
	}
	in := Input{Config: Config(f)}
	if src := in.Config.CorosyncAuthkeyFile; src != "" {
		key, err := readBeside(path, src)
		if err != nil {
			return Input{}, fmt.Errorf("%s: corosyncAuthkeyFile: %w", path, err)
		}
		if len(key) < MinAuthkey || len(key) > MaxAuthkey {
			return Input{}, fmt.Errorf("%s: corosyncAuthkeyFile: %d bytes; Corosync takes %d to %d", path, len(key), MinAuthkey, MaxAuthkey)
		}
		in.Secrets = append(in.Secrets, authkeySecret(key))
	}
	if src := in.Config.EtcdPodManifestFile; src != "" {
		pod, err := readBeside(path, src)
		if err != nil {
			return Input{}, fmt.Errorf("%s: etcdPodManifestFile: %w", path, err)
		}
		if err := checkEtcdPod(pod); err != nil {
			return Input{}, fmt.Errorf("%s: etcdPodManifestFile %s: %w", path, src, err)
		}
		in.Files = append(in.Files, File{Path: EtcdPodManifest, Data: pod})
		in.Config.EtcdPodManifestFile = EtcdPodManifest
	}
	for i := range in.Config.Nodes {
		n := &in.Config.Nodes[i]
		src := n.BMC.PasswordFile
		if src == "" {
			return Input{}, fmt.Errorf("%s: nodes[%d].bmc.passwordFile: missing", path, i)
		}
		pw, err := readBeside(path, src)
		if err != nil {
			return Input{}, fmt.Errorf("%s: nodes[%d].bmc.passwordFile: %w", path, i, err)
		}
		pw = []byte(strings.TrimRight(string(pw), "\r\n"))
		if err := bmc.CheckPassword(string(pw)); err != nil {
			return Input{}, fmt.Errorf("%s: nodes[%d].bmc.passwordFile: %s: the password %w", path, i, src, err)
		}
		n.BMC.PasswordFile = secretPath(n.Name)
		in.Secrets = append(in.Secrets, Secret{Path: n.BMC.PasswordFile, Data: pw})
		if src := n.BMC.CAFile; src != "" {
			ca, err := readBeside(path, src)
			if err != nil {
				return Input{}, fmt.Errorf("%s: nodes[%d].bmc.caFile: %w", path, i, err)
			}
			if _, err := certpool.Parse(ca); err != nil {
				return Input{}, fmt.Errorf("%s: nodes[%d].bmc.caFile: %s: %w", path, i, src, err)
			}
			n.BMC.CAFile = BMCCAFile(n.Name)
			in.Files = append(in.Files, File{Path: n.BMC.CAFile, Data: ca})
		}
	}
	return in, in.finish(path)
}

// checkEtcdPod checks that a manifest is a pod with an etcd container naming its image, which is
// what the agent's podman runtime reads. Only those fields: decoding the whole Pod type here
// would put the Kubernetes API types into tnfctl, which reads cluster.yaml with this package.
func checkEtcdPod(data []byte) error {
	var pod struct {
		Kind string `json:"kind"`
		Spec struct {
			Containers []struct {
				Name  string `json:"name"`
				Image string `json:"image"`
			} `json:"containers"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &pod); err != nil {
		return err
	}
	if pod.Kind != "Pod" {
		return fmt.Errorf("kind: %q, want Pod", pod.Kind)
	}
	for i, c := range pod.Spec.Containers {
		if c.Name == "etcd" {
			if c.Image == "" {
				return fmt.Errorf("spec.containers[%d].image: missing", i)
			}
			return nil
		}
	}
	return fmt.Errorf("spec.containers: no container named etcd")
}

// readStrict reads a YAML file into v; unknown fields are errors, which name the file.
func readStrict(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// readBeside reads a file named in the file at path: a relative name is relative to its folder.
func readBeside(path, name string) ([]byte, error) {
	if !filepath.IsAbs(name) {
		name = filepath.Join(filepath.Dir(path), name)
	}
	return os.ReadFile(name)
}

// installConfig is the part of an install-config.yaml this reads.
type installConfig struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	ControlPlane struct {
		Fencing *struct {
			Credentials []struct {
				HostName                string `json:"hostName"`
				Address                 string `json:"address"`
				Username                string `json:"username"`
				Password                string `json:"password"`
				CertificateVerification string `json:"certificateVerification"`
			} `json:"credentials"`
		} `json:"fencing"`
	} `json:"controlPlane"`
	Platform struct {
		BareMetal struct {
			Hosts []struct {
				Name string `json:"name"`
			} `json:"hosts"`
		} `json:"baremetal"`
	} `json:"platform"`
}

// LoadInstallConfig reads the fencing credentials of an install-config.yaml. The node IPs are
// not in an install-config: ips maps host names to them (from --node-ip flags); nor are the BMC
// certificates' pins, which a BMC whose verification is Disabled needs: pins maps host names to
// them (--bmc-certificate-sha256).
func LoadInstallConfig(path string, ips, pins map[string]string) (Input, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Input{}, err
	}
	var ic installConfig
	// Not strict: an install-config has many fields this does not read.
	if err := yaml.Unmarshal(data, &ic); err != nil {
		return Input{}, fmt.Errorf("%s: %w", path, err)
	}
	f := ic.ControlPlane.Fencing
	if f == nil || len(f.Credentials) == 0 {
		return Input{}, fmt.Errorf("%s: controlPlane.fencing.credentials: missing; a two-node cluster needs one per node", path)
	}
	if len(f.Credentials) != 2 {
		return Input{}, fmt.Errorf("%s: controlPlane.fencing.credentials: exactly two are needed, found %d", path, len(f.Credentials))
	}
	in := Input{Config: Config{ClusterName: ic.Metadata.Name}}
	for i, c := range f.Credentials {
		field := fmt.Sprintf("controlPlane.fencing.credentials[%d]", i)
		if c.HostName == "" {
			return Input{}, fmt.Errorf("%s: %s.hostName: missing", path, field)
		}
		if c.Password == "" {
			return Input{}, fmt.Errorf("%s: %s.password: missing", path, field)
		}
		if err := bmc.CheckPassword(c.Password); err != nil {
			return Input{}, fmt.Errorf("%s: %s.password: %w", path, field, err)
		}
		ip, ok := ips[c.HostName]
		if !ok {
			return Input{}, fmt.Errorf("%s: %s.hostName: no IP given for %q (--node-ip %s=IP)", path, field, c.HostName, c.HostName)
		}
		n := Node{Name: c.HostName, IP: ip, BMC: BMC{Address: c.Address, Username: c.Username,
			PasswordFile: secretPath(c.HostName), CertificateVerification: c.CertificateVerification, CertificateSHA256: pins[c.HostName]}}
		in.Config.Nodes = append(in.Config.Nodes, n)
		in.Secrets = append(in.Secrets, Secret{Path: n.BMC.PasswordFile, Data: []byte(c.Password)})
	}
	for name := range pins {
		if _, _, err := in.Config.Self(name); err != nil {
			return Input{}, fmt.Errorf("%s: a BMC certificate pin for %q, which no controlPlane.fencing.credentials[].hostName names", path, name)
		}
	}
	err = in.finish(path)
	if errors.Is(err, bmc.ErrUnchecked) {
		err = fmt.Errorf("%w (an install-config has no pin: give it as --bmc-certificate-sha256 NAME=SHA256)", err)
	}
	return in, err
}

// Corosync's accepted authkey sizes (corosync-keygen writes 256 bytes).
const (
	MinAuthkey = 128
	MaxAuthkey = 4096
)

// authkeySecret is the key as the nodes get it: base64 text, since a MachineConfig carries text
// (tnfctl setup installs the decoded bytes as /etc/corosync/authkey).
func authkeySecret(key []byte) Secret {
	return Secret{Path: AuthkeyFile, Data: []byte(base64.StdEncoding.EncodeToString(key) + "\n")}
}

// ReuseAuthkey puts key, the one the cluster was given before, in place of a generated key: a
// new key applied to one node at a time would split the nodes. A key read from a
// corosyncAuthkeyFile stays.
func (in *Input) ReuseAuthkey(key []byte) error {
	if !in.AuthkeyGenerated {
		return nil
	}
	if len(key) < MinAuthkey || len(key) > MaxAuthkey {
		return fmt.Errorf("the earlier Corosync key: %d bytes; Corosync takes %d to %d", len(key), MinAuthkey, MaxAuthkey)
	}
	for i, s := range in.Secrets {
		if s.Path == AuthkeyFile {
			in.Secrets[i] = authkeySecret(key)
		}
	}
	in.AuthkeyGenerated = false
	return nil
}

// finish fills defaults and checks. Without a corosyncAuthkeyFile a random key is made, which
// ReuseAuthkey replaces with an earlier render's.
func (in *Input) finish(path string) error {
	if in.Config.CorosyncAuthkeyFile == "" {
		key := make([]byte, 256)
		if _, err := rand.Read(key); err != nil {
			return err
		}
		in.Secrets = append(in.Secrets, authkeySecret(key))
		in.AuthkeyGenerated = true
	}
	in.Config.CorosyncAuthkeyFile = AuthkeyFile
	in.Config.Defaults()
	if err := in.Config.Validate(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := in.Config.ValidateFencing(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

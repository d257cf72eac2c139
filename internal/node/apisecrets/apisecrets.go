package apisecrets

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/fencing/bmc"
	"github.com/tnf-layer/tnf-layer/internal/node/kubeconfig"
)

// File is a secret as the node keeps it: a root-only file.
type File struct {
	Path string
	Data []byte
	// From names the Secret and key, for messages: never the value.
	From string
}

// Client connects with the kubeconfig at path.
func Client(path string) (kubernetes.Interface, error) {
	cfg, err := kubeconfig.Load(path, "tnf-keys-sync", 0)
	if err != nil {
		return nil, fmt.Errorf("secretsFromAPI.kubeconfigFile: %w", err)
	}
	return kubernetes.NewForConfig(cfg)
}

// Fetch reads the Secrets cfg's files come from: each node's fencing credential (whose address,
// user name and verification must be cluster.yaml's: a Secret naming another BMC than the node
// configuration is refused, as swapped entries would fence the wrong machine) and the Corosync
// key. Errors name the Secret and the key, never a value.
func Fetch(ctx context.Context, cs kubernetes.Interface, cfg clusterconfig.Config) ([]File, error) {
	secrets := cs.CoreV1().Secrets(clusterconfig.SecretsNamespace)
	get := func(name string) (map[string][]byte, error) {
		s, err := secrets.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("secret %s/%s: %w", clusterconfig.SecretsNamespace, name, err)
		}
		return s.Data, nil
	}
	var files []File
	for i, n := range cfg.Nodes {
		name := clusterconfig.FencingSecret(n.Name)
		data, err := get(name)
		if err != nil {
			return nil, err
		}
		from := func(key string) string { return clusterconfig.SecretsNamespace + "/" + name + " key " + key }
		for _, key := range []string{"address", "username", "password"} {
			if len(data[key]) == 0 {
				return nil, fmt.Errorf("secret %s: missing or empty", from(key))
			}
		}
		verification := string(data["certificateVerification"])
		if verification == "" {
			verification = "Enabled" // the installer's default, and cluster.yaml's
		}
		for _, c := range []struct{ key, got, want, field string }{
			{"address", string(data["address"]), n.BMC.Address, "address"},
			{"username", string(data["username"]), n.BMC.Username, "username"},
			{"certificateVerification", verification, n.BMC.CertificateVerification, "certificateVerification"},
		} {
			if c.got != c.want {
				return nil, fmt.Errorf("secret %s: %q, but cluster.yaml nodes[%d].bmc.%s is %q: %w",
					from(c.key), c.got, i, c.field, c.want, ErrMismatch)
			}
		}
		password := strings.TrimRight(string(data["password"]), "\r\n")
		if err := bmc.CheckPassword(password); err != nil {
			return nil, fmt.Errorf("secret %s: %w", from("password"), err)
		}
		files = append(files, File{Path: n.BMC.PasswordFile, Data: []byte(password), From: from("password")})
	}
	data, err := get(clusterconfig.AuthkeySecret)
	if err != nil {
		return nil, err
	}
	from := clusterconfig.SecretsNamespace + "/" + clusterconfig.AuthkeySecret + " key " + clusterconfig.AuthkeySecretKey
	key := data[clusterconfig.AuthkeySecretKey]
	if len(key) < clusterconfig.MinAuthkey || len(key) > clusterconfig.MaxAuthkey {
		return nil, fmt.Errorf("secret %s: %d bytes; Corosync takes %d to %d", from, len(key), clusterconfig.MinAuthkey, clusterconfig.MaxAuthkey)
	}
	// Kept as the node configuration kept it: base64 text, which setup decodes.
	files = append(files, File{Path: cfg.CorosyncAuthkeyFile, Data: []byte(base64.StdEncoding.EncodeToString(key) + "\n"), From: from})
	// The metrics endpoint's certificate, once the service-ca operator has issued it: until
	// then the endpoint serves on loopback only.
	tlsSecret, err := secrets.Get(ctx, clusterconfig.MetricsTLSSecret, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return files, nil
	case err != nil:
		return nil, fmt.Errorf("secret %s/%s: %w", clusterconfig.SecretsNamespace, clusterconfig.MetricsTLSSecret, err)
	}
	tlsFrom := clusterconfig.SecretsNamespace + "/" + clusterconfig.MetricsTLSSecret + " key "
	for _, f := range []struct{ key, path string }{{corev1.TLSCertKey, clusterconfig.MetricsTLSCertFile}, {corev1.TLSPrivateKeyKey, clusterconfig.MetricsTLSKeyFile}} {
		if len(tlsSecret.Data[f.key]) == 0 {
			return nil, fmt.Errorf("secret %s: missing or empty", tlsFrom+f.key)
		}
		files = append(files, File{Path: f.path, Data: tlsSecret.Data[f.key], From: tlsFrom + f.key})
	}
	return files, nil
}

// ErrMismatch is a Secret that names another BMC than the node configuration does.
var ErrMismatch = errors.New("the two must name the same BMC")

// ErrKeyChanged is a Corosync key that differs from the one the node's Corosync runs with.
var ErrKeyChanged = errors.New("the Corosync key differs from the one this cluster runs with")

// Keep writes the files that changed, or whose mode is not 0600 (in a 0700 folder, each replaced
// whole), and returns
// their paths. A Corosync key (the file at authkeyFile) other than the one installed at
// installedKey is not written while one is installed: the node would stop hearing its peer,
// which runs with the old key. The other files are written all the same, and the error then
// wraps ErrKeyChanged. A new key needs both nodes at once (operate.md). An empty installedKey
// compares nothing: a guest's Corosync runs with the operator's key, never the layer's.
func Keep(files []File, authkeyFile, installedKey string) (changed []string, err error) {
	var keyErr error
	for _, f := range files {
		if f.Path == authkeyFile {
			if keyErr = sameKey(f, installedKey); keyErr != nil {
				continue
			}
		}
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
			return changed, err
		}
		written, err := fsutil.WriteFileIfChanged(f.Path, f.Data, 0o600)
		if err != nil {
			return changed, err
		}
		if written {
			changed = append(changed, f.Path)
		}
	}
	return changed, keyErr
}

func sameKey(f File, installedKey string) error {
	if installedKey == "" {
		return nil
	}
	installed, err := os.ReadFile(installedKey)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(f.Data)))
	if err != nil {
		return err
	}
	if !bytes.Equal(key, installed) {
		return fmt.Errorf("secret %s: %w (%s): kept the node's; to change it, see operate.md", f.From, ErrKeyChanged, installedKey)
	}
	return nil
}

// Present says whether every file exists on the node already: a boot then needs no API.
func Present(cfg clusterconfig.Config) bool {
	paths := []string{cfg.CorosyncAuthkeyFile}
	for _, n := range cfg.Nodes {
		paths = append(paths, n.BMC.PasswordFile)
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

// Forbidden says whether err is the API refusing the credential: waiting will not help.
func Forbidden(err error) bool { return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) }

// Sync fetches cfg's Secrets with its credential and keeps them (Fetch, then Keep); it returns
// every file and those it changed.
func Sync(ctx context.Context, cfg clusterconfig.Config, installedKey string) (files []File, changed []string, err error) {
	if cfg.SecretsFromAPI == nil {
		return nil, nil, errors.New("secretsFromAPI: not set: this node's secrets come with its node configuration")
	}
	cs, err := Client(cfg.SecretsFromAPI.KubeconfigFile)
	if err != nil {
		return nil, nil, err
	}
	if files, err = Fetch(ctx, cs, cfg); err != nil {
		return nil, nil, err
	}
	changed, err = Keep(files, cfg.CorosyncAuthkeyFile, installedKey)
	return files, changed, err
}

// PasswordChanged says whether one of cfg's BMC password files is among changed: what the fence
// devices must be re-registered for (a renewed metrics certificate is not).
func PasswordChanged(cfg clusterconfig.Config, changed []string) bool {
	for _, n := range cfg.Nodes {
		if slices.Contains(changed, n.BMC.PasswordFile) {
			return true
		}
	}
	return false
}

// Report is one line per file: written or unchanged, and from which Secret.
func Report(files []File, changed []string, step func(name, result string)) {
	for _, f := range files {
		result := "unchanged"
		if slices.Contains(changed, f.Path) {
			result = "written"
		}
		step(f.Path, result+" (from Secret "+f.From+")")
	}
}

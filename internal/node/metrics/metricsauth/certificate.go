package metricsauth

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
)

// Certificate is the serving certificate of two files, read again at a handshake after either
// changed: the service-ca operator renews it well before it expires, and the node's copy of the
// Secret follows, so the endpoint must take the new one without a restart. A pair that does not
// load (the certificate written, its key not yet) leaves the last good one served. Hand-written:
// k8s.io/apiserver's DynamicServingCertificateController does this, but would make
// k8s.io/apiserver a direct dependency of the node's binary for a stat per handshake.
type Certificate struct {
	CertFile, KeyFile string
	Log               *slog.Logger // default slog.Default

	mu      sync.Mutex
	cert    *tls.Certificate
	loaded  [2]os.FileInfo // the files cert was read from
	failed  [2]os.FileInfo // the last pair that did not load, not read again until it changes
	lastErr string         // the last failure logged, so that it is logged once
}

// Load reads the pair; an error names the files.
func (c *Certificate) Load() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	files, err := c.stat()
	if err != nil {
		return err
	}
	return c.load(files)
}

// GetCertificate is tls.Config's: the pair, read again if either file changed.
func (c *Certificate) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	files, err := c.stat()
	switch {
	case err != nil:
		c.logFailure(err)
	case !samePair(files, c.loaded) && !samePair(files, c.failed):
		if err := c.load(files); err != nil {
			c.failed = files
			c.logFailure(err)
		} else {
			c.log().Info("serving a new certificate", "file", c.CertFile, "notAfter", c.cert.Leaf.NotAfter)
		}
	}
	if c.cert == nil {
		return nil, fmt.Errorf("no serving certificate loaded from %s and %s", c.CertFile, c.KeyFile)
	}
	return c.cert, nil
}

func (c *Certificate) stat() ([2]os.FileInfo, error) {
	var files [2]os.FileInfo
	for i, name := range []string{c.CertFile, c.KeyFile} {
		fi, err := os.Stat(name)
		if err != nil {
			return files, err
		}
		files[i] = fi
	}
	return files, nil
}

func (c *Certificate) load(files [2]os.FileInfo) error {
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return fmt.Errorf("serving certificate %s, key %s: %w", c.CertFile, c.KeyFile, err)
	}
	c.cert, c.loaded, c.failed, c.lastErr = &cert, files, [2]os.FileInfo{}, ""
	return nil
}

// logFailure logs why the files cannot be read or loaded, when the reason changed.
func (c *Certificate) logFailure(err error) {
	if err.Error() == c.lastErr {
		return
	}
	c.lastErr = err.Error()
	c.log().Warn("the serving certificate's files do not load: serving the last good one", "error", err)
}

func (c *Certificate) log() *slog.Logger {
	if c.Log == nil {
		return slog.Default()
	}
	return c.Log
}

func samePair(a, b [2]os.FileInfo) bool {
	return a[0] != nil && a[1] != nil && b[0] != nil && b[1] != nil && sameFile(a[0], b[0]) && sameFile(a[1], b[1])
}

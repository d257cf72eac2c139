// Package certpool reads a CA bundle file into a certificate pool.
package certpool

import (
	"crypto/x509"
	"fmt"
	"os"
)

// Load reads the PEM bundle at path; a file without any certificate is an error.
func Load(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no certificates", path)
	}
	return pool, nil
}

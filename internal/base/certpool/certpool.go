// Package certpool reads a CA bundle file into a certificate pool.
package certpool

import (
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// Load reads the PEM bundle at path; a file without any certificate is an error.
func Load(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool, err := Parse(pem)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pool, nil
}

// Parse reads a PEM bundle; one without any certificate is an error.
func Parse(pem []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("no certificates")
	}
	return pool, nil
}

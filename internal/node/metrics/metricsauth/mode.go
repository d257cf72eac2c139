package metricsauth

import (
	"fmt"
	"net"
	"strings"
)

// Mode is how the endpoint serves.
type Mode int

const (
	// Secure: TLS and each caller reviewed through the API, on the listen address.
	Secure Mode = iota
	// Loopback: plain HTTP to anyone on 127.0.0.1 only, until the files Secure needs exist.
	Loopback
	// Plaintext: plain HTTP to anyone on the listen address, the test and lab setting for
	// clusters without an API.
	Plaintext
)

// Choose is how to serve, on which address, and why. Secure needs the serving certificate and the
// node's kubeconfig (missing names those absent). Without them it fails closed: a node booted
// before anyone copied its kubeconfig serves on loopback only, where a local check reads it and
// no network does; plaintext opens plain HTTP on listen as it asks.
func Choose(listen string, plaintext bool, missing []string) (Mode, string, string, error) {
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		return 0, "", "", fmt.Errorf("--listen %q: %w", listen, err)
	}
	switch {
	case plaintext:
		return Plaintext, listen, "--insecure-plaintext: plain HTTP without authorization, a test and lab setting", nil
	case len(missing) > 0:
		return Loopback, net.JoinHostPort("127.0.0.1", port), "no " + strings.Join(missing, ", ") +
			": plain HTTP on loopback only, until they exist", nil
	}
	return Secure, listen, "TLS, each caller reviewed through the API", nil
}

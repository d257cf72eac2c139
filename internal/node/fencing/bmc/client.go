package bmc

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/redfish"

	"github.com/tnf-layer/tnf-layer/internal/base/certpool"
)

// Credential is one node's BMC access, as the installer collects it.
type Credential struct {
	Address  Address
	Username string
	Password string
	// VerifyCertificate is false only for certificateVerification: Disabled.
	VerifyCertificate bool
	// CAFile, when set, is the CA bundle that signs the BMC's certificate (default: the system's).
	CAFile string
	// PinSHA256, when set, is the SHA-256 of the BMC's certificate (lowercase hex, ParsePin):
	// the certificate must be exactly that one, whatever VerifyCertificate says. BMC
	// certificates rarely name the address they are reached at, so a pin is how most of them
	// can be checked at all.
	PinSHA256 string
	// InsecureSkipCertificateCheck is the administrator's opt-out, for labs: the BMC is talked
	// to although its certificate is neither verified nor pinned, and what it says counts (a
	// node it reports Off is fenced). Whoever answers at its address then gets the password and
	// can fence a node that runs by answering "Off".
	InsecureSkipCertificateCheck bool
}

// Authenticated says the BMC's certificate is checked: pinned, or verified, over https.
func (c Credential) Authenticated() bool {
	return c.Address.Scheme == "https" && (c.PinSHA256 != "" || c.VerifyCertificate)
}

// ErrUnchecked is CheckTrust's refusal.
var ErrUnchecked = errors.New("the BMC's certificate is neither verified nor pinned, so the password would go to, and " +
	"a fencing would take \"Off\" from, whoever answers at its address: pin it (certificateSHA256), give its CA " +
	"(caFile, with certificateVerification Enabled), or, for a lab, set insecureSkipCertificateCheck")

// CheckTrust says whether the node may talk to this BMC at all: only when its certificate is
// checked (Authenticated), unless the administrator opted out (InsecureSkipCertificateCheck).
// Every request carries the password, and every answer may fence a node.
func (c Credential) CheckTrust() error {
	if c.Authenticated() || c.InsecureSkipCertificateCheck {
		return nil
	}
	return ErrUnchecked
}

// ParsePin reads a certificate's SHA-256 as openssl x509 -fingerprint -sha256 prints it
// (colons, any case) or as plain hex, and returns it as lowercase hex.
func ParsePin(s string) (string, error) {
	h := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), ":", ""))
	if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("%q is not a SHA-256 (64 hex digits, colons allowed)", s)
	}
	return h, nil
}

// Pin is the SHA-256 of a DER certificate, as PinSHA256 holds it.
func Pin(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// Options tune a connection.
type Options struct {
	// Timeout bounds every request (and the whole connect). Default 10 s.
	Timeout time.Duration
	// BasicAuth sends credentials with every request instead of opening a session (Connect;
	// the power path, System, always does).
	BasicAuth bool
	// UserAgent names the client to the BMC (System; default "tnf-layer"): a BMC's log, and the
	// test BMC's, tells which agent powered a system off.
	UserAgent string
}

func (o Options) withDefaults() Options {
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	if o.UserAgent == "" {
		o.UserAgent = "tnf-layer"
	}
	return o
}

// Client is a connection to one BMC's system.
type Client struct {
	api      *gofish.APIClient
	http     *http.Client
	endpoint string
	path     string
	opts     Options
}

// httpClient is the connection to c's BMC, which only a BMC whose certificate is checked gets
// (CheckTrust): every request carries the password.
func httpClient(c Credential, timeout time.Duration) (*http.Client, error) {
	if err := c.CheckTrust(); err != nil {
		return nil, err
	}
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: !c.VerifyCertificate} //nolint:gosec // the installer's certificateVerification: Disabled
	if c.PinSHA256 != "" {
		// The pin replaces the chain and name checks: it names the one certificate accepted.
		tlsConf.InsecureSkipVerify = true
		tlsConf.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the BMC sent no certificate")
			}
			if got := Pin(cs.PeerCertificates[0].Raw); got != c.PinSHA256 {
				return fmt.Errorf("the BMC's certificate has SHA-256 %s, not the pinned %s", got, c.PinSHA256)
			}
			return nil
		}
	} else if c.CAFile != "" {
		pool, err := certpool.Load(c.CAFile)
		if err != nil {
			return nil, err
		}
		tlsConf.RootCAs = pool
	}
	return &http.Client{
		// A redirect would carry the session token (X-Auth-Token, a header Go forwards to any
		// host) or, for a session's creation, the password to wherever it points: a BMC's
		// answer is taken as it is, and a redirect is an error.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       timeout,
		Transport:     limitedBodies{newTransport(tlsConf, timeout)},
	}, nil
}

// newTransport is the connection to the BMC. The fuzz test serves its bodies in memory
// instead: hundreds of thousands of reads would use up the machine's ephemeral ports.
var newTransport = func(tlsConf *tls.Config, timeout time.Duration) http.RoundTripper {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: timeout}).DialContext,
		TLSHandshakeTimeout: timeout,
		TLSClientConfig:     tlsConf,
	}
}

// maxBody bounds a BMC's answer: a ComputerSystem is a few kilobytes.
const maxBody = 1 << 20

// limitedBodies fails the read of an answer longer than maxBody, so a BMC cannot make the node
// read (and gofish decode) without end.
type limitedBodies struct{ next http.RoundTripper }

// CloseIdleConnections lets Client.Close end the kept-alive connection: each read has a
// transport of its own, and one left open per read piles up in a process that reads again and
// again (tnfctl metrics, a proof of power off).
func (l limitedBodies) CloseIdleConnections() {
	if c, ok := l.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (l limitedBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err == nil {
		resp.Body = http.MaxBytesReader(nil, resp.Body, maxBody)
	}
	return resp, err
}

// Connect opens the service (a session unless BasicAuth). ctx bounds the client's whole life;
// every request is also bounded by o.Timeout.
func Connect(ctx context.Context, c Credential, o Options) (*Client, error) {
	o = o.withDefaults()
	hc, err := httpClient(c, o.Timeout)
	if err != nil {
		return nil, err
	}
	api, err := gofish.ConnectContext(ctx, gofish.ClientConfig{
		Endpoint: c.Address.Endpoint(), Username: c.Username, Password: c.Password,
		HTTPClient: hc, BasicAuth: o.BasicAuth,
	})
	if err != nil {
		hc.CloseIdleConnections()
		return nil, fmt.Errorf("connecting to %s: %w", c.Address.Endpoint(), err)
	}
	return &Client{api: api, http: hc, endpoint: c.Address.Endpoint(), path: c.Address.SystemPath, opts: o}, nil
}

// System reads the ComputerSystem.
func (cl *Client) System() (*redfish.ComputerSystem, error) {
	sys, err := redfish.GetComputerSystem(cl.api, cl.path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", cl.path, err)
	}
	return sys, nil
}

// MACs reads the system's network interfaces' MAC addresses (none when the BMC lists no
// interfaces).
func (cl *Client) MACs(sys *redfish.ComputerSystem) ([]string, error) {
	nics, err := sys.EthernetInterfaces()
	if err != nil {
		return nil, fmt.Errorf("reading %s's network interfaces: %w", cl.path, err)
	}
	var macs []string
	for _, n := range nics {
		macs = append(macs, n.MACAddress, n.PermanentMACAddress)
	}
	return macs, nil
}

// PowerState reads the system's power state.
func (cl *Client) PowerState() (redfish.PowerState, error) {
	sys, err := cl.System()
	if err != nil {
		return "", err
	}
	return sys.PowerState, nil
}

// Reset sends ComputerSystem.Reset.
func (cl *Client) Reset(t redfish.ResetType) error {
	sys, err := cl.System()
	if err != nil {
		return err
	}
	if err := sys.Reset(t); err != nil {
		return fmt.Errorf("reset %s of %s: %w", t, cl.path, err)
	}
	return nil
}

// Close ends the session, if one was opened, and the connection. The logout has a context of
// its own: gofish's would be the one Connect was given, often ended by then (a read that took
// its whole deadline), and a session left open holds one of the few a BMC allows until it times
// out; a node that reads again and again (auto-unblock, a proof of power off) would use them up.
func (cl *Client) Close() {
	defer cl.http.CloseIdleConnections()
	sess, err := cl.api.GetSession()
	if err != nil {
		return // Basic auth: no session
	}
	ctx, cancel := context.WithTimeout(context.Background(), cl.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, cl.endpoint+sess.ID, nil)
	if err != nil {
		return
	}
	req.Header.Set("X-Auth-Token", sess.Token)
	if resp, err := cl.http.Do(req); err == nil {
		resp.Body.Close()
	}
}

// Served is what a BMC's TLS handshake shows, read without sending anything else: no credential
// reaches a BMC this way.
type Served struct {
	// Pin is the SHA-256 (PinSHA256's form) of its certificate, for an administrator to compare
	// with what the BMC's own console shows before pinning it.
	Pin string
	// Untrusted is why roots do not verify the certificate for the address's host; nil when they
	// do, so that certificate verification would check this BMC as it stands.
	Untrusted error
}

// ServedCertificate reads the certificate the BMC at a serves and checks it against roots (nil:
// the system's CAs).
func ServedCertificate(ctx context.Context, a Address, timeout time.Duration, roots *x509.CertPool) (Served, error) {
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // only reads the certificate
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(a.Host, strconv.Itoa(a.Port)))
	if err != nil {
		return Served{}, err
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return Served{}, errors.New("the BMC sent no certificate")
	}
	intermediates := x509.NewCertPool()
	for _, c := range certs[1:] {
		intermediates.AddCert(c)
	}
	_, untrusted := certs[0].Verify(x509.VerifyOptions{DNSName: a.Host, Roots: roots, Intermediates: intermediates})
	return Served{Pin: Pin(certs[0].Raw), Untrusted: untrusted}, nil
}

package bmc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/stmcginnis/gofish/common"
	"github.com/stmcginnis/gofish/redfish"
)

// System is one BMC system reached at its own path: each read is one GET, each reset one POST,
// over one kept-alive connection, with Basic auth (as fence_redfish speaks, so every BMC that
// can be fenced takes it). gofish's APIClient reads the service root before anything else, a
// request more on every connection: on a BMC that answers in 3 s, that alone spent a fencing
// read's whole deadline. The system's schema and its Reset action stay gofish's: System is the
// transport gofish's objects call (common.Client).
type System struct {
	ctx       context.Context
	http      *http.Client
	endpoint  string
	path      string
	username  string
	password  string
	userAgent string
}

// OpenSystem prepares the reads and resets of c's system; it sends nothing. Only a BMC whose
// certificate is checked is opened (CheckTrust). ctx bounds every request, o.Timeout each one.
func OpenSystem(ctx context.Context, c Credential, o Options) (*System, error) {
	o = o.withDefaults()
	hc, err := httpClient(c, o.Timeout)
	if err != nil {
		return nil, err
	}
	return &System{ctx: ctx, http: hc, endpoint: c.Address.Endpoint(), path: c.Address.SystemPath,
		username: c.Username, password: c.Password, userAgent: o.UserAgent}, nil
}

// Read reads the ComputerSystem: one request.
func (s *System) Read() (*redfish.ComputerSystem, error) {
	sys, err := redfish.GetComputerSystem(s, s.path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.path, err)
	}
	return sys, nil
}

// Reset sends ComputerSystem.Reset to the action target sys names (sys read by Read): one
// request.
func (s *System) Reset(sys *redfish.ComputerSystem, t redfish.ResetType) error {
	if err := sys.Reset(t); err != nil {
		return fmt.Errorf("reset %s of %s: %w", t, s.path, err)
	}
	return nil
}

// Close ends the kept-alive connection.
func (s *System) Close() { s.http.CloseIdleConnections() }

// errNotUsed answers the calls of common.Client that reads and resets never make.
var errNotUsed = errors.New("not used by the power path")

// do sends one request with Basic auth and the JSON payload, and takes only a success: anything
// else is gofish's error with the BMC's status code, as its own client reports it.
func (s *System) do(method, url string, payload any, headers map[string]string) (*http.Response, error) {
	var body io.Reader
	if payload != nil {
		data, err := json.Marshal(payload)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(s.ctx, method, s.endpoint+url, body)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(s.username, s.password)
	req.Header.Set("User-Agent", s.userAgent)
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK, http.StatusCreated, http.StatusAccepted, http.StatusNoContent:
		return resp, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, common.ConstructError(0, []byte(err.Error()))
	}
	return nil, common.ConstructError(resp.StatusCode, data)
}

func (s *System) Get(url string) (*http.Response, error) { return s.do(http.MethodGet, url, nil, nil) }
func (s *System) GetWithHeaders(url string, h map[string]string) (*http.Response, error) {
	return s.do(http.MethodGet, url, nil, h)
}
func (s *System) Post(url string, payload any) (*http.Response, error) {
	return s.do(http.MethodPost, url, payload, nil)
}
func (s *System) PostWithHeaders(url string, payload any, h map[string]string) (*http.Response, error) {
	return s.do(http.MethodPost, url, payload, h)
}
func (s *System) PostMultipart(string, map[string]io.Reader) (*http.Response, error) {
	return nil, errNotUsed
}
func (s *System) PostMultipartWithHeaders(string, map[string]io.Reader, map[string]string) (*http.Response, error) {
	return nil, errNotUsed
}
func (s *System) Patch(string, any) (*http.Response, error) { return nil, errNotUsed }
func (s *System) PatchWithHeaders(string, any, map[string]string) (*http.Response, error) {
	return nil, errNotUsed
}
func (s *System) Put(string, any) (*http.Response, error) { return nil, errNotUsed }
func (s *System) PutWithHeaders(string, any, map[string]string) (*http.Response, error) {
	return nil, errNotUsed
}
func (s *System) Delete(string) (*http.Response, error) { return nil, errNotUsed }
func (s *System) DeleteWithHeaders(string, map[string]string) (*http.Response, error) {
	return nil, errNotUsed
}

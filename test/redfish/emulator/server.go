package emulator

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

const root = "/redfish/v1"

// Emulator serves the Redfish API of its systems.
type Emulator struct {
	cfg      Config
	systems  map[string]*system
	order    []string
	srv      *http.Server
	admin    *http.Server
	ln       net.Listener
	adminLn  net.Listener
	caPEM    []byte
	stateDir string

	mu       sync.Mutex
	faults   Faults
	sessions map[string]session // token → session
	nextSess int
	hangs    chan struct{} // closed at Close, releases hung requests
}

type system struct {
	System
	power backend
}

type session struct {
	id, user string
	ids      map[string]bool // systems the credentials that opened it may see
}

// New builds an emulator and starts its power backends (a qemu system with initial On starts
// its QEMU). Call Start to serve and Close to stop everything it started.
func New(cfg Config) (*Emulator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Emulator{cfg: cfg, systems: map[string]*system{}, faults: cfg.Faults, sessions: map[string]session{},
		hangs: make(chan struct{})}
	for _, s := range cfg.Systems {
		var b backend
		var err error
		switch s.Power.Backend {
		case "fake":
			b = newFake(s.Power.Fake)
		case "exec":
			b = execBackend{s.Power.Exec}
		case "qemu":
			b, err = e.qemuBackend(s.ID, s.Power.QEMU)
		}
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("system %s: %w", s.ID, err)
		}
		if s.Name == "" {
			s.Name = "System " + s.ID
		}
		if s.UUID == "" {
			s.UUID = uuidFor(s.ID)
		}
		e.systems[s.ID] = &system{System: s, power: b}
		e.order = append(e.order, s.ID)
	}
	sort.Strings(e.order)
	return e, nil
}

// qemuBackend starts system id's QEMU with a state folder under the emulator's, which is made
// on first use: an emulator without QEMU makes none for a SIGKILL (a test's unreachable BMC)
// to leave behind.
func (e *Emulator) qemuBackend(id string, c QEMUPower) (backend, error) {
	if e.stateDir == "" {
		dir, err := os.MkdirTemp("", "redfish-emulator-")
		if err != nil {
			return nil, err
		}
		e.stateDir = dir
	}
	sub := filepath.Join(e.stateDir, id)
	if err := os.MkdirAll(sub, 0o700); err != nil {
		return nil, err
	}
	return newQEMU(c, sub)
}

// uuidFor makes a stable UUID from a system id.
func uuidFor(id string) string {
	h := sha256.Sum256([]byte("redfish-emulator/" + id))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// Start listens and serves in the background.
func (e *Emulator) Start() error {
	tlsConf, ca, err := serverTLS(e.cfg)
	if err != nil {
		return err
	}
	e.caPEM = ca
	ln, err := net.Listen("tcp", e.cfg.Listen)
	if err != nil {
		return err
	}
	e.ln = ln
	e.srv = &http.Server{Handler: e.handler(), ReadHeaderTimeout: 10 * time.Second}
	if e.cfg.PlainHTTP {
		go e.srv.Serve(ln)
	} else {
		e.srv.TLSConfig = tlsConf
		go e.srv.ServeTLS(ln, "", "")
	}
	if e.cfg.AdminListen != "" {
		aln, err := net.Listen("tcp", e.cfg.AdminListen)
		if err != nil {
			e.Close()
			return err
		}
		e.adminLn = aln
		e.admin = &http.Server{Handler: e.adminHandler(), ReadHeaderTimeout: 10 * time.Second}
		go e.admin.Serve(aln)
	}
	return nil
}

// URL is the service's base URL (https://host:port).
func (e *Emulator) URL() string {
	scheme := "https"
	if e.cfg.PlainHTTP {
		scheme = "http"
	}
	return scheme + "://" + e.ln.Addr().String()
}

// AdminURL is the fault-injection endpoint's base URL ("" when not enabled).
func (e *Emulator) AdminURL() string {
	if e.adminLn == nil {
		return ""
	}
	return "http://" + e.adminLn.Addr().String()
}

// CAPEM is the CA that signed the serving certificate (nil when a certificate was given).
func (e *Emulator) CAPEM() []byte { return e.caPEM }

// SetFaults replaces the injected faults.
func (e *Emulator) SetFaults(f Faults) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = f
}

// QEMUPID is the PID of a qemu system's process, 0 when it is off or not a qemu system.
func (e *Emulator) QEMUPID(id string) int {
	if s, ok := e.systems[id]; ok {
		if q, ok := s.power.(*qemuBackend); ok {
			return q.PID()
		}
	}
	return 0
}

// Close stops serving and powers off what the emulator owns.
func (e *Emulator) Close() error {
	var errs []error
	// Under the lock: a request being answered reads e.hangs (inject).
	e.mu.Lock()
	if e.hangs != nil {
		close(e.hangs)
		e.hangs = nil
	}
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range []*http.Server{e.srv, e.admin} {
		if s != nil {
			errs = append(errs, s.Shutdown(ctx))
		}
	}
	for _, s := range e.systems {
		errs = append(errs, s.power.Close())
	}
	errs = append(errs, os.RemoveAll(e.stateDir))
	return errors.Join(errs...)
}

// redfishError writes an error in Redfish's JSON error format.
func redfishError(w http.ResponseWriter, status int, id, msg string) {
	w.Header().Set("Content-Type", "application/json")
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="redfish"`)
	}
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code":    "Base.1.8.GeneralError",
		"message": msg,
		"@Message.ExtendedInfo": []map[string]any{{
			"@odata.type": "#Message.v1_1_1.Message", "MessageId": "Base.1.8." + id, "Message": msg,
			"Severity": "Critical", "Resolution": "See the message.",
		}},
	}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("OData-Version", "4.0")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func constantTimeEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// principal returns the ids of the systems the request may see: Basic credentials or a
// session token. ok is false when it presented neither valid credentials nor token.
func (e *Emulator) principal(r *http.Request) (map[string]bool, bool) {
	user, pw, basic := r.BasicAuth()
	if tok := r.Header.Get("X-Auth-Token"); tok != "" && !basic {
		e.mu.Lock()
		s, ok := e.sessions[tok]
		e.mu.Unlock()
		if !ok {
			return nil, false
		}
		return s.ids, true
	}
	if !basic {
		return nil, false
	}
	ids := e.systemsOf(user, pw)
	return ids, len(ids) > 0
}

// systemsOf: the systems whose credentials match.
func (e *Emulator) systemsOf(user, pw string) map[string]bool {
	ids := map[string]bool{}
	for id, s := range e.systems {
		if constantTimeEqual(s.Username, user) && s.checkPassword(pw) {
			ids[id] = true
		}
	}
	return ids
}

// inject applies the configured faults; it reports false when the request was answered.
func (e *Emulator) inject(w http.ResponseWriter, r *http.Request) bool {
	e.mu.Lock()
	f := &e.faults
	latency := f.Latency.Duration
	hang := f.HangNext > 0
	if hang {
		f.HangNext--
	}
	fail := 0
	if !hang && f.FailNext > 0 {
		f.FailNext--
		fail = f.FailCode
		if fail == 0 {
			fail = http.StatusServiceUnavailable
		}
	}
	hangs := e.hangs
	e.mu.Unlock()
	if latency > 0 {
		select {
		case <-time.After(latency):
		case <-r.Context().Done():
			return false
		}
	}
	if hang {
		// Until the client gives up or the emulator stops; bounded by both.
		select {
		case <-r.Context().Done():
		case <-hangs:
		}
		return false
	}
	if fail != 0 {
		redfishError(w, fail, "GeneralError", "injected fault")
		return false
	}
	return true
}

func (e *Emulator) handler() http.Handler {
	mux := http.NewServeMux()
	type route struct {
		methods string
		auth    bool
		h       func(http.ResponseWriter, *http.Request, map[string]bool)
	}
	routes := map[string]route{
		root:                   {"GET", false, e.serviceRoot},
		root + "/{$}":          {"GET", false, e.serviceRoot},
		root + "/Systems":      {"GET", true, e.systemsCollection},
		root + "/Systems/{id}": {"GET", true, e.computerSystem},
		root + "/Systems/{id}/Actions/ComputerSystem.Reset": {"POST", true, e.resetAction},
		root + "/Systems/{id}/EthernetInterfaces":           {"GET", true, e.nicCollection},
		root + "/Systems/{id}/EthernetInterfaces/{nic}":     {"GET", true, e.nic},
		root + "/SessionService":                            {"GET", true, e.sessionService},
		root + "/SessionService/Sessions":                   {"GET POST", false, e.sessionsCollection},
		root + "/SessionService/Sessions/{sid}":             {"GET DELETE", true, e.sessionResource},
	}
	for pattern, rt := range routes {
		rt := rt
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if !e.inject(w, r) {
				return
			}
			if !strings.Contains(rt.methods, r.Method) {
				w.Header().Set("Allow", strings.ReplaceAll(rt.methods, " ", ", "))
				redfishError(w, http.StatusMethodNotAllowed, "OperationNotAllowed", r.Method+" is not allowed on "+r.URL.Path)
				return
			}
			var ids map[string]bool
			if rt.auth || (r.Method == "GET" && strings.HasSuffix(pattern, "/Sessions")) {
				var ok bool
				if ids, ok = e.principal(r); !ok {
					redfishError(w, http.StatusUnauthorized, "NoValidSession", "authentication required")
					return
				}
			}
			rt.h(w, r, ids)
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if !e.inject(w, r) {
			return
		}
		redfishError(w, http.StatusNotFound, "ResourceMissingAtURI", "no resource at "+r.URL.Path)
	})
	return mux
}

func (e *Emulator) serviceRoot(w http.ResponseWriter, _ *http.Request, _ map[string]bool) {
	writeJSON(w, http.StatusOK, map[string]any{
		"@odata.id": root, "@odata.type": "#ServiceRoot.v1_5_0.ServiceRoot",
		"Id": "RootService", "Name": "Root Service", "RedfishVersion": "1.8.0",
		"UUID":           uuidFor("service"),
		"Systems":        map[string]string{"@odata.id": root + "/Systems"},
		"SessionService": map[string]string{"@odata.id": root + "/SessionService"},
		"Links":          map[string]any{"Sessions": map[string]string{"@odata.id": root + "/SessionService/Sessions"}},
	})
}

func (e *Emulator) systemsCollection(w http.ResponseWriter, _ *http.Request, ids map[string]bool) {
	members := []map[string]string{}
	for _, id := range e.order {
		if ids[id] {
			members = append(members, map[string]string{"@odata.id": root + "/Systems/" + id})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"@odata.id": root + "/Systems", "@odata.type": "#ComputerSystemCollection.ComputerSystemCollection",
		"Name": "Computer System Collection", "Members@odata.count": len(members), "Members": members,
	})
}

// lookup finds the system named in the path that the principal may see (404 otherwise, so
// ids of other BMCs' systems do not leak).
func (e *Emulator) lookup(w http.ResponseWriter, r *http.Request, ids map[string]bool) *system {
	id := r.PathValue("id")
	s, ok := e.systems[id]
	if !ok || !ids[id] {
		redfishError(w, http.StatusNotFound, "ResourceMissingAtURI", "no system "+id)
		return nil
	}
	return s
}

// stuck returns the power state a system is stuck in, or "".
func (e *Emulator) stuck(id string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.faults.Stuck[id]
}

func (e *Emulator) allowedResets(s *system) []string {
	var out []string
	for _, t := range allResetTypes {
		if t == ResetNmi {
			if eb, ok := s.power.(execBackend); ok && len(eb.c.Nmi) == 0 {
				continue
			}
		}
		out = append(out, t)
	}
	return out
}

func (e *Emulator) computerSystem(w http.ResponseWriter, r *http.Request, ids map[string]bool) {
	s := e.lookup(w, r, ids)
	if s == nil {
		return
	}
	state := e.stuck(s.ID)
	if state == "" {
		var err error
		if state, err = s.power.State(r.Context()); err != nil {
			redfishError(w, http.StatusInternalServerError, "InternalError", "reading power state: "+err.Error())
			return
		}
	}
	path := root + "/Systems/" + s.ID
	writeJSON(w, http.StatusOK, map[string]any{
		"@odata.id": path, "@odata.type": "#ComputerSystem.v1_13_0.ComputerSystem",
		"Id": s.ID, "Name": s.Name, "UUID": s.UUID, "SystemType": "Physical",
		"PowerState":         state,
		"EthernetInterfaces": map[string]string{"@odata.id": path + "/EthernetInterfaces"},
		"Status":             map[string]string{"State": "Enabled", "Health": "OK"},
		"Actions": map[string]any{"#ComputerSystem.Reset": map[string]any{
			"target":                            path + "/Actions/ComputerSystem.Reset",
			"ResetType@Redfish.AllowableValues": e.allowedResets(s),
		}},
	})
}

// nicCollection lists the system's network interfaces, one per configured MAC, named by index.
func (e *Emulator) nicCollection(w http.ResponseWriter, r *http.Request, ids map[string]bool) {
	s := e.lookup(w, r, ids)
	if s == nil {
		return
	}
	path := root + "/Systems/" + s.ID + "/EthernetInterfaces"
	members := []map[string]string{}
	for i := range s.MACs {
		members = append(members, map[string]string{"@odata.id": fmt.Sprintf("%s/%d", path, i+1)})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"@odata.id": path, "@odata.type": "#EthernetInterfaceCollection.EthernetInterfaceCollection",
		"Name": "Ethernet Interface Collection", "Members@odata.count": len(members), "Members": members,
	})
}

func (e *Emulator) nic(w http.ResponseWriter, r *http.Request, ids map[string]bool) {
	s := e.lookup(w, r, ids)
	if s == nil {
		return
	}
	i, err := strconv.Atoi(r.PathValue("nic"))
	if err != nil || i < 1 || i > len(s.MACs) {
		redfishError(w, http.StatusNotFound, "ResourceMissingAtURI", "no resource at "+r.URL.Path)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"@odata.id": r.URL.Path, "@odata.type": "#EthernetInterface.v1_6_0.EthernetInterface",
		"Id": strconv.Itoa(i), "Name": "NIC " + strconv.Itoa(i), "MACAddress": s.MACs[i-1], "PermanentMACAddress": s.MACs[i-1],
	})
}

func (e *Emulator) resetAction(w http.ResponseWriter, r *http.Request, ids map[string]bool) {
	s := e.lookup(w, r, ids)
	if s == nil {
		return
	}
	var body struct {
		ResetType *string
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
	if err := dec.Decode(&body); err != nil {
		redfishError(w, http.StatusBadRequest, "MalformedJSON", "malformed request body: "+err.Error())
		return
	}
	if body.ResetType == nil {
		redfishError(w, http.StatusBadRequest, "ActionParameterMissing", "ResetType is required")
		return
	}
	t := *body.ResetType
	allowed := false
	for _, a := range e.allowedResets(s) {
		allowed = allowed || a == t
	}
	if !allowed {
		redfishError(w, http.StatusBadRequest, "ActionParameterNotSupported",
			fmt.Sprintf("ResetType %q is not one of %v", t, e.allowedResets(s)))
		return
	}
	if e.stuck(s.ID) != "" {
		// Accepted, but nothing happens: the machine is stuck.
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if err := reset(r.Context(), s.power, t); err != nil {
		redfishError(w, http.StatusInternalServerError, "InternalError", "reset "+t+": "+err.Error())
		return
	}
	if e.cfg.Log != nil {
		e.cfg.Log.Info("power action", "system", s.Name, "reset", t, "client", r.UserAgent())
	}
	w.WriteHeader(http.StatusNoContent)
}

func (e *Emulator) sessionService(w http.ResponseWriter, _ *http.Request, _ map[string]bool) {
	writeJSON(w, http.StatusOK, map[string]any{
		"@odata.id": root + "/SessionService", "@odata.type": "#SessionService.v1_1_8.SessionService",
		"Id": "SessionService", "Name": "Session Service", "ServiceEnabled": true, "SessionTimeout": 1800,
		"Sessions": map[string]string{"@odata.id": root + "/SessionService/Sessions"},
	})
}

func (e *Emulator) sessionsCollection(w http.ResponseWriter, r *http.Request, _ map[string]bool) {
	if r.Method == "GET" {
		e.mu.Lock()
		members := []map[string]string{}
		for _, s := range e.sessions {
			members = append(members, map[string]string{"@odata.id": root + "/SessionService/Sessions/" + s.id})
		}
		e.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"@odata.id": root + "/SessionService/Sessions",
			"Name": "Session Collection", "Members@odata.count": len(members), "Members": members})
		return
	}
	var body struct{ UserName, Password string }
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&body); err != nil {
		redfishError(w, http.StatusBadRequest, "MalformedJSON", "malformed request body: "+err.Error())
		return
	}
	ids := e.systemsOf(body.UserName, body.Password)
	if len(ids) == 0 {
		redfishError(w, http.StatusUnauthorized, "NoValidSession", "invalid credentials")
		return
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		redfishError(w, http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	e.mu.Lock()
	e.nextSess++
	s := session{id: fmt.Sprint(e.nextSess), user: body.UserName, ids: ids}
	e.sessions[hex.EncodeToString(tok)] = s
	e.mu.Unlock()
	loc := root + "/SessionService/Sessions/" + s.id
	w.Header().Set("X-Auth-Token", hex.EncodeToString(tok))
	w.Header().Set("Location", loc)
	writeJSON(w, http.StatusCreated, map[string]any{"@odata.id": loc, "Id": s.id, "UserName": s.user})
}

func (e *Emulator) sessionResource(w http.ResponseWriter, r *http.Request, _ map[string]bool) {
	sid := r.PathValue("sid")
	e.mu.Lock()
	defer e.mu.Unlock()
	for tok, s := range e.sessions {
		if s.id != sid {
			continue
		}
		if r.Method == "DELETE" {
			delete(e.sessions, tok)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"@odata.id": root + "/SessionService/Sessions/" + sid, "Id": sid, "UserName": s.user})
		return
	}
	redfishError(w, http.StatusNotFound, "ResourceMissingAtURI", "no session "+sid)
}

// adminHandler serves GET and PUT /faults (JSON).
func (e *Emulator) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /faults", func(w http.ResponseWriter, _ *http.Request) {
		e.mu.Lock()
		f := e.faults
		e.mu.Unlock()
		writeJSON(w, http.StatusOK, f)
	})
	mux.HandleFunc("PUT /faults", func(w http.ResponseWriter, r *http.Request) {
		var f Faults
		dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			http.Error(w, "faults: "+err.Error(), http.StatusBadRequest)
			return
		}
		for id := range f.Stuck {
			if _, ok := e.systems[id]; !ok {
				http.Error(w, "faults.stuck: no system "+id, http.StatusBadRequest)
				return
			}
		}
		e.SetFaults(f)
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

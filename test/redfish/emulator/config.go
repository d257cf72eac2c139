// Package emulator is a Redfish BMC emulator for tests: HTTPS, Basic auth and sessions, the
// service root, Systems and ComputerSystem.Reset, with power backends that drive a QEMU process,
// run commands, or keep state in memory, and fault injection for fence timeouts. It is a test
// tool, not shipped in the layer.
package emulator

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"golang.org/x/crypto/bcrypt"
	"sigs.k8s.io/yaml"

	"github.com/tnf-layer/tnf-layer/internal/base/duration"
)

// Config is the emulator's YAML configuration.
type Config struct {
	// Listen is the HTTPS address (loopback by default).
	Listen string `json:"listen,omitempty"`
	// AdminListen, when set, serves the fault-injection endpoint over plain HTTP.
	AdminListen string `json:"adminListen,omitempty"`
	TLS         TLS    `json:"tls,omitempty"`
	// PlainHTTP serves http:// instead of https:// (for clients that test the redfish+http form).
	PlainHTTP bool     `json:"plainHTTP,omitempty"`
	Systems   []System `json:"systems"`
	Faults    Faults   `json:"faults,omitempty"`
	// Log gets one line per power action carried out (nil: none), with the client's User-Agent:
	// a boot test's timeline shows who powered a machine off or on (fence_redfish, or the test).
	Log *slog.Logger `json:"-"`
}

// TLS names a certificate and key; when both are empty a CA and a server certificate are
// generated at start and, if CertOut is set, written there as ca.pem and cert.pem.
type TLS struct {
	Cert    string `json:"cert,omitempty"`
	Key     string `json:"key,omitempty"`
	CertOut string `json:"certOut,omitempty"`
}

// System is one ComputerSystem with its own credentials and power backend.
type System struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	UUID string `json:"uuid,omitempty"`
	// MACs are the system's network interfaces (EthernetInterfaces), as a BMC lists its
	// machine's NICs.
	MACs     []string `json:"macs,omitempty"`
	Username string   `json:"username"`
	// One of Password, PasswordHash (bcrypt) or PasswordFile.
	Password     string `json:"password,omitempty"`
	PasswordHash string `json:"passwordHash,omitempty"`
	PasswordFile string `json:"passwordFile,omitempty"`
	Power        Power  `json:"power"`
}

// Power selects and configures a power backend.
type Power struct {
	Backend string    `json:"backend"` // fake, exec or qemu
	Fake    FakePower `json:"fake,omitempty"`
	Exec    ExecPower `json:"exec,omitempty"`
	QEMU    QEMUPower `json:"qemu,omitempty"`
}

// FakePower keeps the state in memory; a change lands after Delay.
type FakePower struct {
	Initial string            `json:"initial,omitempty"` // On (default) or Off
	Delay   duration.Duration `json:"delay,omitempty"`
}

// ExecPower runs commands: Status prints On or Off; PowerOn and PowerOff change the power; Nmi
// is optional. (Not "on"/"off": YAML reads those keys as booleans.)
type ExecPower struct {
	PowerOn  []string `json:"powerOn"`
	PowerOff []string `json:"powerOff"`
	Status   []string `json:"status"`
	Nmi      []string `json:"nmi,omitempty"`
}

// QEMUPower owns a QEMU process: Command is its command line without -qmp, which the emulator
// adds. Power On starts it; GracefulShutdown escalates to a power cut after GracefulTimeout.
type QEMUPower struct {
	Command         []string          `json:"command"`
	Initial         string            `json:"initial,omitempty"` // Off (default) or On
	GracefulTimeout duration.Duration `json:"gracefulTimeout,omitempty"`
	Console         string            `json:"console,omitempty"` // file for QEMU's stdout/stderr
	// PIDFile, when set, holds the running QEMU's PID: whoever started the emulator can still
	// stop QEMU by its PID if the emulator itself dies.
	PIDFile string `json:"pidFile,omitempty"`
}

// Faults are injected into requests and power changes.
type Faults struct {
	Latency  duration.Duration `json:"latency,omitempty"`  // added to every request
	FailNext int               `json:"failNext,omitempty"` // the next N requests get FailCode
	FailCode int               `json:"failCode,omitempty"` // default 503
	HangNext int               `json:"hangNext,omitempty"` // the next N requests hang until the client gives up
	Stuck    map[string]string `json:"stuck,omitempty"`    // system ID → power state it is stuck in
}

// LoadConfig reads and validates a YAML config; unknown fields are errors.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	var c Config
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Validate checks the config; errors name the field.
func (c *Config) Validate() error {
	if c.Listen == "" {
		c.Listen = "127.0.0.1:8443"
	}
	if (c.TLS.Cert == "") != (c.TLS.Key == "") {
		return fmt.Errorf("tls: cert and key go together")
	}
	if len(c.Systems) == 0 {
		return fmt.Errorf("systems: at least one system is needed")
	}
	seen := map[string]bool{}
	for i := range c.Systems {
		s := &c.Systems[i]
		field := fmt.Sprintf("systems[%d]", i)
		if s.ID == "" || strings.ContainsAny(s.ID, "/?#") {
			return fmt.Errorf("%s.id: %q is not a usable id", field, s.ID)
		}
		if seen[s.ID] {
			return fmt.Errorf("%s.id: %q is used twice", field, s.ID)
		}
		seen[s.ID] = true
		if s.Username == "" {
			return fmt.Errorf("%s.username: missing", field)
		}
		n := 0
		for _, p := range []string{s.Password, s.PasswordHash, s.PasswordFile} {
			if p != "" {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("%s: exactly one of password, passwordHash, passwordFile is needed", field)
		}
		if s.PasswordFile != "" {
			data, err := os.ReadFile(s.PasswordFile)
			if err != nil {
				return fmt.Errorf("%s.passwordFile: %w", field, err)
			}
			s.Password = strings.TrimRight(string(data), "\r\n")
			s.PasswordFile = ""
		}
		if s.PasswordHash != "" {
			if _, err := bcrypt.Cost([]byte(s.PasswordHash)); err != nil {
				return fmt.Errorf("%s.passwordHash: not a bcrypt hash: %w", field, err)
			}
		}
		switch s.Power.Backend {
		case "fake":
			if !validState(s.Power.Fake.Initial) {
				return fmt.Errorf("%s.power.fake.initial: %q is neither On nor Off", field, s.Power.Fake.Initial)
			}
		case "exec":
			e := s.Power.Exec
			if len(e.PowerOn) == 0 || len(e.PowerOff) == 0 || len(e.Status) == 0 {
				return fmt.Errorf("%s.power.exec: powerOn, powerOff and status commands are needed", field)
			}
		case "qemu":
			if len(s.Power.QEMU.Command) == 0 {
				return fmt.Errorf("%s.power.qemu.command: missing", field)
			}
			if !validState(s.Power.QEMU.Initial) {
				return fmt.Errorf("%s.power.qemu.initial: %q is neither On nor Off", field, s.Power.QEMU.Initial)
			}
		default:
			return fmt.Errorf("%s.power.backend: %q is not fake, exec or qemu", field, s.Power.Backend)
		}
	}
	for id, st := range c.Faults.Stuck {
		if !seen[id] || (st != "On" && st != "Off") {
			return fmt.Errorf("faults.stuck: %q: %q must name a system and On or Off", id, st)
		}
	}
	return nil
}

func validState(s string) bool { return s == "" || s == "On" || s == "Off" }

// checkPassword compares in constant time (bcrypt for hashes).
func (s System) checkPassword(pw string) bool {
	if s.PasswordHash != "" {
		return bcrypt.CompareHashAndPassword([]byte(s.PasswordHash), []byte(pw)) == nil
	}
	return constantTimeEqual(s.Password, pw)
}

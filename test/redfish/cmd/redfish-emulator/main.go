// Command redfish-emulator serves emulated Redfish BMCs for the tests: from a YAML config, or
// N in-memory systems with --fake N.
package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/test/redfish/emulator"
)

func main() {
	var (
		configFile, listen, adminListen, user, passwordFile, certOut string
		fake                                                         int
	)
	cmd := &cobra.Command{
		Use:   "redfish-emulator",
		Short: "Serve emulated Redfish BMCs (HTTPS, Basic auth and sessions, Systems, ComputerSystem.Reset)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var cfg emulator.Config
			switch {
			case configFile != "" && fake > 0:
				return fmt.Errorf("--config and --fake exclude each other")
			case configFile != "":
				var err error
				if cfg, err = emulator.LoadConfig(configFile); err != nil {
					return err
				}
			case fake > 0:
				if user == "" || passwordFile == "" {
					return fmt.Errorf("--fake needs --user and --password-file")
				}
				data, err := os.ReadFile(passwordFile)
				if err != nil {
					return fmt.Errorf("--password-file: %w", err)
				}
				pw := strings.TrimRight(string(data), "\r\n")
				for i := 1; i <= fake; i++ {
					cfg.Systems = append(cfg.Systems, emulator.System{ID: strconv.Itoa(i), Username: user, Password: pw,
						Power: emulator.Power{Backend: "fake"}})
				}
			default:
				return fmt.Errorf("give --config FILE or --fake N")
			}
			if listen != "" {
				cfg.Listen = listen
			}
			if adminListen != "" {
				cfg.AdminListen = adminListen
			}
			if certOut != "" {
				cfg.TLS.CertOut = certOut
			}
			cfg.Log = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			emu, err := emulator.New(cfg)
			if err != nil {
				return err
			}
			defer emu.Close()
			if err := emu.Start(); err != nil {
				return err
			}
			msg := fmt.Sprintf("redfish-emulator: serving %d system(s) on %s", len(cfg.Systems), emu.URL())
			if cfg.TLS.CertOut != "" {
				msg += ", CA in " + cfg.TLS.CertOut + "/ca.pem"
			}
			if a := emu.AdminURL(); a != "" {
				msg += ", faults at " + a + "/faults"
			}
			fmt.Fprintln(cmd.ErrOrStderr(), msg)
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
			<-sig
			return nil
		},
		SilenceUsage: true,
	}
	f := cmd.Flags()
	f.StringVar(&configFile, "config", "", "YAML configuration")
	f.IntVar(&fake, "fake", 0, "serve N in-memory systems with ids 1..N (no config file)")
	f.StringVar(&listen, "listen", "", "HTTPS address (default 127.0.0.1:8443)")
	f.StringVar(&adminListen, "admin-listen", "", "plain-HTTP address of the fault-injection endpoint (PUT /faults)")
	f.StringVar(&user, "user", "", "user name of the --fake systems")
	f.StringVar(&passwordFile, "password-file", "", "file holding the --fake systems' password")
	f.StringVar(&certOut, "cert-out", "", "directory to write the generated ca.pem and cert.pem to")
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
}

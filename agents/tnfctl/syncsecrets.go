package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/clusterconfig"
	"github.com/tnf-layer/tnf-layer/internal/node/apisecrets"
	"github.com/tnf-layer/tnf-layer/internal/node/nodesetup"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

func syncSecretsCommand(nf *nodeFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "sync-secrets",
		Short: "Fetch this node's Secrets from the API into its root-only files, and apply a changed BMC password",
		Long: "Reads the Secrets cluster.yaml's secretsFromAPI names (each node's fencing-credentials Secret and the " +
			"Corosync key, in " + clusterconfig.SecretsNamespace + ") and replaces the files whose value changed. On a node " +
			"set up already, a change then starts tnf-reconfigure.service, which re-registers the fence devices with the new " +
			"password, without a reboot. A Corosync key other than the one the cluster runs with is refused. tnf-secrets-sync.timer " +
			"runs it every 5 minutes. One line per file.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := clusterconfig.Load(nf.config)
			if err != nil {
				return err
			}
			files, changed, err := apisecrets.Sync(cmd.Context(), cfg, nodesetup.AuthkeyPath)
			if err != nil {
				return fmt.Errorf("%s: %w", nf.config, err)
			}
			out := cmd.OutOrStdout()
			apisecrets.Report(files, changed, func(name, result string) { fmt.Fprintf(out, "sync-secrets: %s: %s\n", name, result) })
			if len(changed) == 0 {
				return nil
			}
			if _, err := os.Stat(nodesetup.Marker); err != nil {
				fmt.Fprintln(out, "sync-secrets: setup has not completed here: it reads the files when it runs")
				return nil
			}
			if _, ok := nodesetup.DetectServices().(nodesetup.Systemd); !ok {
				fmt.Fprintln(out, "sync-secrets: no systemd: run tnfctl setup to apply the change")
				return nil
			}
			if _, err := (pcmk.Tools{}).Run(cmd.Context(), "systemctl", "start", "--no-block", "tnf-reconfigure.service"); err != nil {
				return err
			}
			fmt.Fprintln(out, "sync-secrets: tnf-reconfigure.service started: it applies the change")
			return nil
		},
	}
}

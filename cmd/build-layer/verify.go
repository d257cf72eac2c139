package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/base/output"
	"github.com/tnf-layer/tnf-layer/internal/build/buildlayer"
	"github.com/tnf-layer/tnf-layer/internal/build/layerdef"
)

func verifyCommand() *cobra.Command {
	var (
		o         buildlayer.Options
		version   string
		format    string
		tlsVerify bool
	)
	cmd := &cobra.Command{
		Use:   "verify IMAGE",
		Short: "Check a pushed layer: its files and modes, no secret material in any layer, its labels",
		Long: "verify reads IMAGE (docker://…, oci:…, oci-archive:…, dir:…; a bare name is a registry image) with every " +
			"layer checked against its digest, and checks it against its layer definition (--ocp/--layer, default: the one " +
			"its io.tnf-layer.layer label names): every file the layer ships is there, a regular file owned by root with its " +
			"mode; the HA stack's commands are installed; no layer holds node secrets, cluster keys, SSH host keys, registry " +
			"credentials or PEM private keys, and no environment variable or build step carries a secret; the labels name " +
			"the layer, version, source commit and release. Every finding is listed; the exit code is 2 when there are " +
			"findings, 1 when the image could not be read.",
		Example: `  build-layer verify docker://registry.example.com/tnf/layer:4.19 --authfile auth.json`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.SkipTLSVerify = !tlsVerify
			s, err := buildlayer.Verify(cmd.Context(), o, args[0], version)
			if s.Digest == "" {
				return err
			}
			if perr := output.Print(cmd.OutOrStdout(), format, s, func(w io.Writer) {
				fmt.Fprintf(w, "%s\ndigest %s, layer %s, version %s, commit %s, %d layers\n", s.Image, s.Digest,
					s.Layer, s.Labels[layerdef.LabelVersion], s.Labels[layerdef.LabelCommit], s.Layers)
				for _, f := range s.Findings {
					fmt.Fprintf(w, "  FAIL %s\n", f)
				}
				if err == nil {
					fmt.Fprintln(w, "ok: files, modes, HA commands, no secret material, labels")
				}
			}); perr != nil {
				return perr
			}
			return err
		},
	}
	f := cmd.Flags()
	layerAndRegistryFlags(f, &o, &tlsVerify)
	f.StringVar(&version, "layer-version", "", "the layer version the image must carry")
	output.Flag(f, &format)
	return cmd
}

package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tnf-layer/tnf-layer/internal/build/imagebuild"
	"github.com/tnf-layer/tnf-layer/internal/build/labbase"
)

func labBaseCommand() *cobra.Command {
	var (
		store, mirror string
		rebuild       bool
	)
	cmd := &cobra.Command{
		Use:   "lab-base",
		Short: "Debootstrap Debian 12 (systemd, a kernel) into the build store as " + labbase.Name + " (kept once built)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := imagebuild.OpenStore(store)
			if err != nil {
				return fmt.Errorf("--store %s: %w", store, err)
			}
			defer imagebuild.CloseStore(st)
			d, err := labbase.Build(cmd.Context(), st, labbase.Options{Mirror: mirror, Created: time.Unix(0, 0).UTC(), Rebuild: rebuild})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s@%s\n", strings.SplitN(labbase.Name, ":", 2)[0], d)
			return nil
		},
	}
	storeFlag(cmd.Flags(), &store)
	cmd.Flags().StringVar(&mirror, "mirror", "http://deb.debian.org/debian", "Debian mirror")
	cmd.Flags().BoolVar(&rebuild, "rebuild", false, "debootstrap again even when the store has the base")
	return cmd
}

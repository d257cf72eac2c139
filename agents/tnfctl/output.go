package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// outputFlag adds oc's -o/--output to a command that prints state: text for people, json or
// yaml for scripts (the same fields in both).
func outputFlag(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVarP(format, "output", "o", "text", "output format: text, json or yaml")
}

// printAs prints v as format; text is the command's own view.
func printAs(w io.Writer, format string, v any, text func(io.Writer)) error {
	switch format {
	case "text":
		text(w)
		return nil
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "yaml":
		data, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	return fmt.Errorf("--output %q: want text, json or yaml", format)
}

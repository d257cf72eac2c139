// Package output is the -o/--output flag of the commands that print state, as oc has it: text
// for people, json or yaml for scripts (the same fields in both).
package output

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// Flag adds -o/--output to f, text by default.
func Flag(f *pflag.FlagSet, format *string) {
	f.StringVarP(format, "output", "o", "text", "output format: text, json or yaml")
}

// Print prints v as format; text is the command's own view.
func Print(w io.Writer, format string, v any, text func(io.Writer)) error {
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

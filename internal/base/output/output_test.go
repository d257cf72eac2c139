package output

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestPrint(t *testing.T) {
	v := struct {
		State string `json:"state"`
	}{"healthy"}
	for format, want := range map[string]string{"text": "view\n", "json": "{\n  \"state\": \"healthy\"\n}\n", "yaml": "state: healthy\n"} {
		var out bytes.Buffer
		if err := Print(&out, format, v, func(w io.Writer) { io.WriteString(w, "view\n") }); err != nil || out.String() != want {
			t.Errorf("%s: %q, %v; want %q", format, out.String(), err, want)
		}
	}
	if err := Print(io.Discard, "wide", v, nil); err == nil || !strings.Contains(err.Error(), `--output "wide"`) {
		t.Errorf("an unknown format: %v", err)
	}
}

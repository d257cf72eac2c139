// Package duration is a time.Duration that YAML and JSON configuration files write as "10s".
package duration

import (
	"fmt"
	"strings"
	"time"
)

// Duration is a time.Duration written as "10s".
type Duration struct{ time.Duration }

func (d *Duration) UnmarshalJSON(b []byte) error {
	v, err := time.ParseDuration(strings.Trim(string(b), `"`))
	if err != nil {
		return fmt.Errorf("duration %s: %w", b, err)
	}
	d.Duration = v
	return nil
}

func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

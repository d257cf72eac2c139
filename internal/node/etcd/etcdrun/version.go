package etcdrun

import (
	"fmt"
	"strings"
)

// ParseVersion reads the version out of `etcd --version` ("etcd Version: 3.5.21" on its first
// line, then the API, Go and platform lines).
func ParseVersion(out string) (string, error) {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "etcd Version:"); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("etcd --version printed no version: %.200q", out)
}

// Package shellquote writes words as one POSIX shell command line, for tests that hand a command
// to a shell (script -c, a script written onto a machine).
package shellquote

import "strings"

// Join quotes each word in single quotes (a single quote in it closed, escaped and opened again)
// and joins them with spaces: sh reads back exactly the words given.
func Join(words ...string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}

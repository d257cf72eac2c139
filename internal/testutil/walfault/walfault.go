// Package walfault damages an etcd WAL as a crash does, for tests only.
package walfault

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
)

// TearLast appends to the last WAL file in walDir the start of a record that never finished, as
// a power cut in the middle of a write leaves it: a frame that announces 4 KiB, 100 bytes of it,
// and the end of the file. etcd preallocates a WAL file with zeros after its last record, which
// ends 8-byte aligned; the frame goes there.
func TearLast(walDir string) error {
	names, err := filepath.Glob(filepath.Join(walDir, "*.wal"))
	if err != nil || len(names) == 0 {
		return fmt.Errorf("%s: no WAL file (%v)", walDir, err)
	}
	path := names[len(names)-1]
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	end := (len(bytes.TrimRight(data, "\x00")) + 7) &^ 7
	frame := binary.LittleEndian.AppendUint64(nil, 4096)
	frame = append(frame, bytes.Repeat([]byte{0xab}, 100)...)
	return os.WriteFile(path, append(data[:end:end], frame...), 0o600)
}

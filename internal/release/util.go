package release

import (
	"bufio"
	"io"
)

type peekReader struct{ *bufio.Reader }

func newPeekReader(r io.Reader) peekReader { return peekReader{bufio.NewReader(r)} }

// gzipped reports whether the stream starts with the gzip magic.
func (p peekReader) gzipped() bool {
	b, err := p.Peek(2)
	return err == nil && b[0] == 0x1f && b[1] == 0x8b
}

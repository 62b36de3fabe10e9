// Package bounded reads what bench does not trust (files a pull request
// may change, reports from an artifact) without letting its size decide
// bench's memory: past a limit, reading stops with an error that names the
// file and the limit.
package bounded

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrTooLarge is wrapped by the error a read past its limit returns.
var ErrTooLarge = errors.New("over the size bench reads")

// ReadFile reads the file at path, at most limit bytes of it.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, limit, path)
}

// ReadAll reads r to its end, at most limit bytes; what names r in the
// error.
func ReadAll(r io.Reader, limit int64, what string) ([]byte, error) {
	b, err := io.ReadAll(Reader(r, limit, what))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Reader is r, failing once more than limit bytes have been read from it
// (a decoder reading it stops there).
func Reader(r io.Reader, limit int64, what string) io.Reader {
	return &reader{r: r, left: limit, limit: limit, what: what}
}

type reader struct {
	r     io.Reader
	left  int64
	limit int64
	what  string
}

func (l *reader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, l.err()
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n - int(-l.left), l.err()
	}
	return n, err
}

func (l *reader) err() error {
	return fmt.Errorf("%s: %w (%s)", l.what, ErrTooLarge, Size(l.limit))
}

// Size writes n bytes in MiB or KiB when it is a whole number of them.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

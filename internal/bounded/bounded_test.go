package bounded

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	os.WriteFile(path, bytes.Repeat([]byte("x"), 1024), 0o600)
	if b, err := ReadFile(path, 1024); err != nil || len(b) != 1024 {
		t.Errorf("at the limit: %d bytes, %v", len(b), err)
	}
	_, err := ReadFile(path, 1023)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "1023 bytes") {
		t.Errorf("one byte over: %v", err)
	}
	_, err = ReadAll(strings.NewReader(strings.Repeat("y", 3<<20)), 2<<20, "report.json")
	if err == nil || err.Error() != "report.json: over the size bench reads (2 MiB)" {
		t.Errorf("over: %v", err)
	}
}

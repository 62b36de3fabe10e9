package traces

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzPackReader feeds arbitrary bytes to the pack reader, which verifies
// every run against its ID and the end checksum before Import writes
// anything: they must never panic, and every
// refusal must be an ErrBadPack. (That a refused import writes nothing is
// tested in TestPackTruncatedImportsNothing and TestPackTamperedImportsNothing.)
func FuzzPackReader(f *testing.F) {
	src, err := Open(f.TempDir(), nil)
	if err != nil {
		f.Fatal(err)
	}
	c := newCorpus(3, 1, 1, 1)
	run := c.run(0, 0, 0)
	run.Events = run.Events[:4] // keep the seed small
	if _, err := src.PutRun(run, "seed/run"); err != nil {
		f.Fatal(err)
	}
	var seed bytes.Buffer
	if _, err := src.Export(&seed); err != nil {
		f.Fatal(err)
	}
	src.Close()
	f.Add(seed.Bytes())
	f.Add([]byte(packMagic))
	f.Add(append([]byte(packMagic), 0x28, 0xb5, 0x2f, 0xfd))

	f.Fuzz(func(t *testing.T, data []byte) {
		err := readPack(bytes.NewReader(data), func(*packRun) error { return nil }, func(Ref) {})
		if err != nil && !errors.Is(err, ErrBadPack) {
			t.Fatalf("pack refused without ErrBadPack: %v", err)
		}
	})
}

package traces

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// FuzzPackReader feeds arbitrary bytes to the pack reader and verifier that
// Import runs before it writes anything: they must never panic, and every
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

	missing := func(id ID) ([]nodeRef, []byte, error) { return nil, nil, fmt.Errorf("blob %s: %w", id, ErrNotFound) }
	none := func(ID) (bool, error) { return false, nil }
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := readPack(bytes.NewReader(data))
		if err == nil {
			err = p.verify(missing, none)
		}
		if err != nil && !errors.Is(err, ErrBadPack) {
			t.Fatalf("pack refused without ErrBadPack: %v", err)
		}
	})
}

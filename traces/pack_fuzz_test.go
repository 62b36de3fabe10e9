package traces

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpbench/bench/internal/testbin"
)

// FuzzImport imports arbitrary bytes as a pack, under small bounds, into a
// store: it must never panic; every refusal must be an ErrBadPack (that a
// refused import writes nothing is TestPackTruncatedImportsNothing's and
// TestPackTamperedImportsNothing's); and what an import costs must follow
// from its bounds, never from what the pack declares or expands to: the
// bytes it allocates at most a multiple of them (beyond a constant: the
// zstd window a pack may ask for, the store's own), and the fuzzing
// process's peak RSS under testbin.PeakRSSLimit. The seeds include the
// hostile packs of hostile_test.go: a terabyte of blobs and a gigabyte of
// zeros in a few kilobytes each.
func FuzzImport(f *testing.F) {
	s, err := Open(f.TempDir(), nil)
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	src, err := Open(f.TempDir(), nil)
	if err != nil {
		f.Fatal(err)
	}
	run := newCorpus(3, 1, 1, 1).run(0, 0, 0)
	run.Events = run.Events[:4] // keep the seed small
	if _, err := src.PutRun(run, "seed/run"); err != nil {
		f.Fatal(err)
	}
	var seed bytes.Buffer
	if _, err := src.Export(&seed); err != nil {
		f.Fatal(err)
	}
	src.Close()
	v1, err := os.ReadFile("testdata/pack-v1.benchpack")
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range [][]byte{
		seed.Bytes(), v1, []byte(packMagic), append([]byte(packMagic), 0x28, 0xb5, 0x2f, 0xfd),
		expansionBomb(1 << 40), expansionBomb(43372), zeroBomb(1<<30, 1<<10), stringBomb(1 << 30),
		docPack([]byte(`{}`), nil),
	} {
		f.Add(p)
	}

	opts := &ImportOptions{Overwrite: true, MaxRunBytes: 256 << 10, MaxBytes: 1 << 20}
	const slack = 64 << 20 // a zstd window of 8 MiB, pebble's batch and tables
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		resetPeakRSS()
		runtime.ReadMemStats(&before)
		_, err := s.Import(bytes.NewReader(data), opts)
		runtime.ReadMemStats(&after)
		if err != nil && !errors.Is(err, ErrBadPack) {
			t.Fatalf("pack refused without ErrBadPack: %v", err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16*uint64(opts.MaxBytes+opts.MaxRunBytes)+slack {
			t.Fatalf("an import under bounds of %d and %d bytes allocated %d bytes (%v)", opts.MaxRunBytes, opts.MaxBytes, alloc, err)
		}
		if rss := peakRSS(); rss >= testbin.PeakRSSLimit {
			t.Fatalf("peak RSS %d MB (%v)", rss>>20, err)
		}
	})
}

// resetPeakRSS sets the process's peak RSS (VmHWM) back to its RSS now
// (Linux: clear_refs 5), so that peakRSS measures what comes after it and
// not what the package's tests before it held (under -race, several
// hundred megabytes of shadow memory).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS is this process's peak resident set (Linux's VmHWM), or 0 where
// it is not known.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

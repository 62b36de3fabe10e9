package traces

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// fakeIter is a table as pebble reads it: sorted keys in blocks, each
// block found through its separator (a key at or after its last, before
// the next block's first), some blocks unreadable. Every move that reads a
// bad block fails, as pebble's does.
type fakeIter struct {
	keys   [][]byte
	block  []int    // block of each key
	seps   [][]byte // separator of each block
	bad    map[int]bool
	lo, hi []byte // bounds
	pos    int    // current key, or -1/len: exhausted
	err    error
	reads  int // reads of bad blocks
}

func (f *fakeIter) fail(b int) bool {
	f.err = fmt.Errorf("block %d: checksum mismatch: %w", b, pebble.ErrCorruption)
	f.reads++
	f.pos = -1
	return false
}

// blockFor is the block an index lookup of k gives: the first whose
// separator is at or after k, or len(seps) for none.
func (f *fakeIter) blockFor(k []byte) int {
	b, _ := slices.BinarySearchFunc(f.seps, k, bytes.Compare)
	return b
}

func (f *fakeIter) first(b int) int {
	i, _ := slices.BinarySearch(f.block, b)
	return i
}

func (f *fakeIter) inBounds(i int) bool {
	return i >= 0 && i < len(f.keys) && (f.lo == nil || bytes.Compare(f.keys[i], f.lo) >= 0) && (f.hi == nil || bytes.Compare(f.keys[i], f.hi) < 0)
}

func (f *fakeIter) at(i int) bool {
	if !f.inBounds(i) {
		f.pos = -1
		return false
	}
	f.pos = i
	return true
}

func (f *fakeIter) SeekGE(k []byte) bool {
	f.err = nil
	if f.lo != nil && bytes.Compare(k, f.lo) < 0 {
		k = f.lo
	}
	b := f.blockFor(k)
	if b == len(f.seps) {
		return f.at(-1)
	}
	if f.bad[b] {
		return f.fail(b)
	}
	i, _ := slices.BinarySearchFunc(f.keys, k, bytes.Compare)
	if i < len(f.keys) && f.block[i] != b && f.bad[f.block[i]] {
		return f.fail(f.block[i])
	}
	return f.at(i)
}

// back lands on key i going backwards: pebble reads the entry before it
// too, to be sure it has seen every version of key i.
func (f *fakeIter) back(i int) bool {
	if i >= 1 && f.block[i-1] != f.block[i] && f.bad[f.block[i-1]] && (f.lo == nil || bytes.Compare(f.seps[f.block[i-1]], f.lo) >= 0) {
		return f.fail(f.block[i-1])
	}
	return f.at(i)
}

func (f *fakeIter) SeekLT(k []byte) bool {
	f.err = nil
	if f.hi != nil && bytes.Compare(k, f.hi) > 0 {
		k = f.hi
	}
	b := min(f.blockFor(k), len(f.seps)-1)
	if f.bad[b] {
		return f.fail(b)
	}
	i, _ := slices.BinarySearchFunc(f.keys, k, bytes.Compare)
	i--
	if i >= 0 && f.block[i] != b && f.bad[f.block[i]] {
		return f.fail(f.block[i])
	}
	if !f.inBounds(i) {
		return f.at(-1)
	}
	return f.back(i)
}

func (f *fakeIter) Last() bool {
	if f.hi != nil {
		return f.SeekLT(f.hi)
	}
	f.err = nil
	if f.bad[len(f.seps)-1] {
		return f.fail(len(f.seps) - 1)
	}
	return f.back(len(f.keys) - 1)
}

func (f *fakeIter) Next() bool {
	i := f.pos + 1
	if i < len(f.keys) && f.block[i] != f.block[f.pos] && f.bad[f.block[i]] {
		return f.fail(f.block[i])
	}
	return f.at(i)
}

func (f *fakeIter) Prev() bool {
	i := f.pos - 1
	if i >= 0 && f.block[i] != f.block[f.pos] && f.bad[f.block[i]] {
		return f.fail(f.block[i])
	}
	if !f.inBounds(i) {
		return f.at(-1)
	}
	return f.back(i)
}

func (f *fakeIter) Key() []byte                  { return f.keys[f.pos] }
func (f *fakeIter) ValueAndErr() ([]byte, error) { return f.keys[f.pos], nil }
func (f *fakeIter) Error() error                 { return f.err }

func newFakeIter(r *rand.Rand, n int) *fakeIter {
	seen := map[string]bool{}
	f := &fakeIter{bad: map[int]bool{}}
	prefixes := []string{"anchor/", "base/", "ref/golden/reference/baseline/client-diagnosis-0", "run/"}
	for len(f.keys) < n {
		k := []byte(prefixes[r.IntN(len(prefixes))])
		for range 1 + r.IntN(4) {
			k = append(k, byte(r.IntN(256)))
		}
		if !seen[string(k)] {
			seen[string(k)] = true
			f.keys = append(f.keys, k)
		}
	}
	slices.SortFunc(f.keys, bytes.Compare)
	b := 0
	for i := range f.keys {
		if i > 0 && r.IntN(4) == 0 {
			// The block before ends: its separator is its last key, or a
			// string between it and this one.
			sep := f.keys[i-1]
			if m, ok := midpoint(f.keys[i-1], f.keys[i]); ok && r.IntN(2) == 0 {
				sep = m
			}
			f.seps = append(f.seps, sep)
			b++
		}
		f.block = append(f.block, b)
	}
	f.seps = append(f.seps, f.keys[len(f.keys)-1])
	return f
}

func randomDamage(seed uint64) (*fakeIter, []byte, []byte) {
	r := rand.New(rand.NewPCG(seed, 7))
	f := newFakeIter(r, 1+r.IntN(120))
	for b := range f.seps {
		if r.IntN(3) == 0 {
			f.bad[b] = true
		}
	}
	var lower, upper []byte
	if r.IntN(2) == 0 {
		lower = f.keys[r.IntN(len(f.keys))]
	}
	if r.IntN(2) == 0 {
		upper = f.keys[r.IntN(len(f.keys))]
		if lower != nil && bytes.Compare(upper, lower) <= 0 {
			upper = nil
		}
	}
	f.lo, f.hi = lower, upper
	return f, lower, upper
}

// checkScan checks what a tolerant scan of f read: no key read is in a
// hole, every key of a damaged block is in one, every hole wraps
// ErrCorrupt; and, when exact, every key of a readable block was read, once,
// in order.
func checkScan(t *testing.T, seed uint64, f *fakeIter, got [][]byte, holes []hole, exact bool) {
	t.Helper()
	var want [][]byte
	for i, k := range f.keys {
		if !f.inBounds(i) {
			continue
		}
		in := slices.ContainsFunc(holes, func(h hole) bool { return h.contains(k) })
		if f.bad[f.block[i]] {
			if !in {
				t.Errorf("seed %d: key %x of bad block %d is in no hole (holes %v)", seed, k, f.block[i], holes)
			}
			continue
		}
		if slices.ContainsFunc(got, func(g []byte) bool { return bytes.Equal(g, k) }) {
			if in {
				t.Errorf("seed %d: key %x was read, and is in a hole", seed, k)
			}
		}
		want = append(want, k)
	}
	if exact && !slices.EqualFunc(got, want, bytes.Equal) {
		t.Errorf("seed %d: read %d keys, want %d:\n got %x\nwant %x", seed, len(got), len(want), got, want)
	}
	if !slices.IsSortedFunc(got, bytes.Compare) || len(slices.CompactFunc(slices.Clone(got), bytes.Equal)) != len(got) {
		t.Errorf("seed %d: keys read out of order or twice: %x", seed, got)
	}
	for _, h := range holes {
		if !errors.Is(h.err, ErrCorrupt) {
			t.Errorf("seed %d: hole error %v does not wrap ErrCorrupt", seed, h.err)
		}
	}
}

// The tolerant scan reads every key of a readable block once, in order,
// and every key of a damaged block falls in a hole it reports; no key read
// is in a hole. Random tables, random damage, random bounds; a hint in each
// block (as Verify has: the runs refs name).
func TestScanTolerantRandom(t *testing.T) {
	for seed := range uint64(500) {
		f, lower, upper := randomDamage(seed)
		var hints [][]byte
		for i, k := range f.keys {
			if i == 0 || f.block[i] != f.block[i-1] || seed%2 == 0 {
				hints = append(hints, k)
			}
		}
		var got [][]byte
		holes, err := scanTolerant(f, lower, upper, hints, func(k, _ []byte) error {
			got = append(got, bytes.Clone(k))
			return nil
		})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		checkScan(t, seed, f, got, holes, true)
	}
}

// Without hints, the scan may take readable keys between damaged blocks
// close together for lost, but never reads a key it reports lost, nor
// reports a damaged key read.
func TestScanTolerantNoHints(t *testing.T) {
	lost, total := 0, 0
	for seed := range uint64(500) {
		f, lower, upper := randomDamage(seed)
		var got [][]byte
		holes, err := scanTolerant(f, lower, upper, nil, func(k, _ []byte) error {
			got = append(got, bytes.Clone(k))
			return nil
		})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		checkScan(t, seed, f, got, holes, false)
		readable := 0
		for i := range f.keys {
			if f.inBounds(i) && !f.bad[f.block[i]] {
				readable++
			}
		}
		lost += readable - len(got)
		total += readable
	}
	t.Logf("without hints: %d readable keys lost of %d", lost, total)
}

// One bad block costs few reads of it: the scan does not stop there, and
// does not read the block once per key after it.
func TestScanTolerantFewReads(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	f := newFakeIter(r, 2000)
	f.bad[len(f.seps)/2] = true
	n := 0
	holes, err := scanTolerant(f, nil, nil, nil, func(_, _ []byte) error { n++; return nil })
	if err != nil || len(holes) != 1 {
		t.Fatalf("holes %v, err %v; want one", holes, err)
	}
	t.Logf("%d reads of the bad block", f.reads)
	if f.reads > 12 {
		t.Errorf("the bad block was read %d times, want at most 12", f.reads)
	}
	want := 0
	for i := range f.keys {
		if !f.bad[f.block[i]] {
			want++
		}
	}
	if n != want {
		t.Errorf("read %d keys, want %d", n, want)
	}
}

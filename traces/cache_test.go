package traces

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValueCacheBoundedLRU(t *testing.T) {
	c := newValueCache(400)
	val := func(i int) []byte { return []byte(fmt.Sprintf("%099d", i)) } // 99 bytes
	id := func(i int) ID { return Hash(val(i)) }
	for i := range 4 {
		c.add(id(i), val(i))
	}
	c.get(id(0)) // 0 is now the most recent: 1 goes first
	c.add(id(4), val(4))
	if _, ok := c.get(id(1)); ok {
		t.Error("the least recently used value was kept")
	}
	for _, i := range []int{0, 2, 3, 4} {
		if b, ok := c.get(id(i)); !ok || string(b) != string(val(i)) {
			t.Errorf("value %d: %q, %v", i, b, ok)
		}
	}
	if c.size > c.max {
		t.Errorf("size %d above the bound %d", c.size, c.max)
	}
	big := make([]byte, 101)
	c.add(Hash(big), big)
	if _, ok := c.get(Hash(big)); ok {
		t.Error("a value above a quarter of the bound was kept")
	}
	var off *valueCache
	off.add(id(0), val(0))
	if _, ok := off.get(id(0)); ok {
		t.Error("a nil cache returned a value")
	}
	// The cache copies what it keeps.
	b := val(9)
	c.add(id(9), b)
	b[0] = 'x'
	if got, _ := c.get(id(9)); string(got) != string(val(9)) {
		t.Error("the cache kept the caller's bytes")
	}
}

// GetRun reads the same runs with the cache as without, in any order, and
// the cache stays within its bound.
func TestGetRunCached(t *testing.T) {
	c := smallCorpus()
	dir := t.TempDir()
	s, err := Open(dir, &Options{ReadCacheBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var ids []ID
	if err := c.all(func(ref string, run *Run) error {
		id, err := s.PutRunNoSync(run, ref)
		ids = append(ids, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	cachedStore, err := Open(dir, &Options{ReadCacheBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer cachedStore.Close()
	for round := range 2 {
		for i := range ids {
			id := ids[(i*7+round)%len(ids)]
			got, err := cachedStore.GetRun(id)
			if err != nil {
				t.Fatal(err)
			}
			plain := &expander{node: cachedStore.node, memo: map[ID][]byte{}}
			doc, err := plain.expand(id, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			var want Run
			if err := decodeCanonical(doc, &want); err != nil {
				t.Fatal(err)
			}
			want.Manifest.RunID, want.Manifest.StartedAt = got.Manifest.RunID, got.Manifest.StartedAt
			wb, _ := Marshal(&want)
			gb, _ := Marshal(got)
			if string(wb) == string(gb) && want.Manifest == got.Manifest {
				continue
			}
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Fatalf("round %d, run %s: cached read differs (-uncached +cached):\n%s", round, id.Short(), diff)
			}
		}
	}
	if cachedStore.cache.size == 0 || cachedStore.cache.size > 64<<10 {
		t.Errorf("cache holds %d bytes (bound %d)", cachedStore.cache.size, 64<<10)
	}
}

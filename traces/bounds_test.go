package traces

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"
)

// Import's bounds meet exactly: a pack that decompresses to exactly
// MaxBytes imports, one byte less refuses it; a run past MaxRunBytes, and a
// pack of format 1 whose blobs hold more, are refused; each refusal is a
// *LimitError that names its bound, and imports nothing.
func TestImportBounds(t *testing.T) {
	a := openTemp(t)
	putAll(t, a, smallCorpus())
	p := exportBytes(t, a)
	plain := int64(len(packText(packRecords(t, p))))
	v1, err := os.ReadFile("testdata/pack-v1.benchpack")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		pack  []byte
		opts  ImportOptions
		limit string // "" when it imports
		want  string
	}{
		{"exactly the bound", p, ImportOptions{MaxBytes: plain}, "", ""},
		{"a byte past the bound", p, ImportOptions{MaxBytes: plain - 1}, "import", "the pack decompresses (and its runs expand) to more than"},
		{"a run past its bound", p, ImportOptions{MaxRunBytes: 40 << 10}, "run", "holds more than 40960 bytes, the limit for one run"},
		{"format 1 within bounds", v1, ImportOptions{}, "", ""},
		{"format 1 blobs past the bound of a run", v1, ImportOptions{MaxRunBytes: 40 << 10}, "run", "a pack of format 1 holds its blobs in memory"},
		// Its six runs' blobs decompress to 42 KiB, and the runs expand to
		// 6 x 43-68 KB.
		{"format 1 runs expanded past the bound", v1, ImportOptions{MaxBytes: 200 << 10}, "import", "(and its runs expand) to more than 204800 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := openTemp(t)
			_, err := d.Import(bytes.NewReader(tt.pack), &tt.opts)
			if tt.limit == "" {
				if err != nil {
					t.Fatalf("Import = %v", err)
				}
				return
			}
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != tt.limit || !errors.Is(err, ErrBadPack) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Import = %v; want a *LimitError of the %s bound saying %q", err, tt.limit, tt.want)
			}
			assertEmpty(t, d)
		})
	}
}

// An import of many families holds the bases it makes only up to
// maxTxBaseBytes; past it, a run that would make a base is stored alone.
// Every run reads back the same, and the store verifies.
func TestImportBoundsBasesHeld(t *testing.T) {
	defer func(n int) { maxTxBaseBytes = n }(maxTxBaseBytes)
	maxTxBaseBytes = 100 << 10 // two runs of the corpus
	c := smallCorpus()
	a := openTemp(t)
	putAll(t, a, c)
	d := openTemp(t)
	if _, err := d.Import(bytes.NewReader(exportBytes(t, a)), nil); err != nil {
		t.Fatal(err)
	}
	st, err := d.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := a.Stats(); st.Bases >= want.Bases || st.Runs != want.Runs {
		t.Errorf("import made %d bases of %d runs; want fewer than the %d of the store exported", st.Bases, st.Runs, want.Bases)
	}
	if v, err := d.Verify(context.Background()); err != nil || !v.OK() {
		t.Fatalf("Verify = %v, %v", v, err)
	}
	if err := c.all(func(ref string, _ *Run) error {
		id, err := d.Ref(ref)
		if err != nil {
			return err
		}
		got, err := d.GetRun(id)
		if err != nil {
			return err
		}
		want, err := a.GetRun(id)
		if err != nil {
			return err
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-exported +imported):\n%s", ref, diff)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A run record whose sizes are wrong is an error that names the run, wraps
// ErrCorrupt, and allocates nothing for the size it claims: a frame that
// declares another size than its record is refused before decoding, and
// one that declares none decodes no further than the record's size.
func TestGetRunBadRecord(t *testing.T) {
	doc := []byte(`{"events":[],"manifest":{"format":1}}`)
	id := Hash(doc)
	enc, _ := zstd.NewWriter(nil)
	frame := enc.EncodeAll(doc, nil) // declares no size
	enc, _ = zstd.NewWriter(nil, zstd.WithSingleSegment(true))
	sized := enc.EncodeAll(doc, nil)
	head := func(docLen, plainLen uint64, kind byte) []byte {
		b := append([]byte{recordVersion}, appendUvarints(nil, []uint64{docLen, plainLen})...)
		return append(append(b, 0), kind)
	}
	n := uint64(len(doc))
	for _, tt := range []struct {
		name   string
		record []byte
		want   string
	}{
		{"size 2^62", append(head(n, 1<<62, kindRaw), doc...), "bad header"},
		{"document longer than the run", append(head(n+1, n, kindRaw), doc...), "bad header"},
		{"raw, shorter than its size", append(head(n, n+5, kindRaw), doc...), "does not match its ID"},
		{"frame of another size", append(head(n, 1<<29, kindZstd), sized...), "the frame holds 37 bytes, the record says 536870912"},
		{"frame of no size, too small for its record", append(head(n, 1<<29, kindZstd), frame...), "the record says 536870912 bytes, more than a frame of 50 bytes holds"},
		{"frame of no size decodes past it", append(head(4, 4, kindZstd), zstdFrame(zpart{rle: 'x', n: 1 << 20})...), "decompressing"},
		{"unknown kind", append(head(n, n, 7), doc...), "unknown kind"},
		{"truncated", []byte{recordVersion, 0x80}, "bad header"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := openTemp(t)
			if err := s.db.Set(runKey(id), tt.record, pebble.Sync); err != nil {
				t.Fatal(err)
			}
			_, err := s.GetRun(id)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), id.Short()) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("GetRun = %v; want ErrCorrupt naming run %s, saying %q", err, id.Short(), tt.want)
			}
		})
	}
}

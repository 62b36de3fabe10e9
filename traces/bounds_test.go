package traces

import (
	"errors"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/klauspost/compress/zstd"
)

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

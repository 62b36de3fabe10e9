package traces

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/klauspost/compress/dict"
	"github.com/klauspost/compress/zstd"
)

// Blobs are small (a tool definition, a model message, an HTTP body), and
// zstd compresses small inputs poorly on its own: most of what they share
// (field names, enum values, the server's vocabulary) is across blobs. So
// the store trains a zstd dictionary on its own blobs when it collects
// garbage, re-encodes every blob with it, and encodes new blobs with it
// from then on. Each dictionary is kept under its zstd dictionary ID, which
// every compressed frame names, so a blob always says which dictionary it
// needs; a dictionary is dropped only once no blob uses it.
var (
	prefixDict  = []byte("dict/") // + uint32 big-endian -> zstd dictionary
	keyDictMeta = []byte("meta/dict")
)

type dictMeta struct {
	ID    uint32 `json:"id"`
	Blobs int    `json:"blobs"` // live blobs when it was trained
}

const (
	dictMaxSize    = 112 << 10
	dictMaxSamples = 16 << 20
	dictMinSamples = 32 << 10
)

func dictKey(id uint32) []byte { return binary.BigEndian.AppendUint32(bytes.Clone(prefixDict), id) }

// loadCodecs builds the encoder (with the current dictionary) and the
// decoder (with every stored dictionary).
func (s *Store) loadCodecs() error {
	var dicts [][]byte
	if err := s.scan(prefixDict, func(_, v []byte) error {
		dicts = append(dicts, bytes.Clone(v))
		return nil
	}); err != nil {
		return fmt.Errorf("loading dictionaries: %w", err)
	}
	meta, err := s.dictMeta()
	if err != nil {
		return err
	}
	var current []byte
	if meta.ID != 0 {
		v, closer, err := s.db.Get(dictKey(meta.ID))
		if err != nil {
			return fmt.Errorf("store %s: current dictionary %d: %w", s.dir, meta.ID, wrapCorrupt(err))
		}
		current = bytes.Clone(v)
		closer.Close()
	}
	return s.setCodecs(current, dicts)
}

func (s *Store) setCodecs(current []byte, dicts [][]byte) error {
	newEnc := func(level int) (*zstd.Encoder, error) {
		eopts := []zstd.EOption{zstd.WithEncoderLevel(zstd.EncoderLevel(level)), zstd.WithEncoderConcurrency(1)}
		if current != nil {
			eopts = append(eopts, zstd.WithEncoderDict(current))
		}
		enc, err := zstd.NewWriter(nil, eopts...)
		if err != nil {
			return nil, fmt.Errorf("zstd encoder: %w", err)
		}
		return enc, nil
	}
	enc, err := newEnc(s.opts.CompressionLevel)
	if err != nil {
		return err
	}
	encFast, err := newEnc(s.opts.NoSyncLevel)
	if err != nil {
		enc.Close()
		return err
	}
	dopts := []zstd.DOption{zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(1 << 31)}
	if len(dicts) > 0 {
		dopts = append(dopts, zstd.WithDecoderDicts(dicts...))
	}
	dec, err := zstd.NewReader(nil, dopts...)
	if err != nil {
		enc.Close()
		encFast.Close()
		return fmt.Errorf("zstd decoder: %w", err)
	}
	s.mu.Lock()
	oldEnc, oldFast, oldDec := s.enc, s.encFast, s.dec
	s.enc, s.encFast, s.dec = enc, encFast, dec
	s.mu.Unlock()
	if oldEnc != nil {
		oldEnc.Close()
	}
	if oldFast != nil {
		oldFast.Close()
	}
	if oldDec != nil {
		oldDec.Close()
	}
	return nil
}

func (s *Store) dictMeta() (dictMeta, error) {
	var m dictMeta
	v, closer, err := s.db.Get(keyDictMeta)
	if errors.Is(err, pebble.ErrNotFound) {
		return m, nil
	}
	if err != nil {
		return m, fmt.Errorf("reading dictionary meta: %w", wrapCorrupt(err))
	}
	defer closer.Close()
	if err := json.Unmarshal(v, &m); err != nil {
		return m, fmt.Errorf("dictionary meta: %v: %w", err, ErrCorrupt)
	}
	return m, nil
}

// retrain trains a new dictionary when there is none yet or the store has
// doubled since the last one, re-encodes every blob with it and drops the
// dictionaries no blob uses any more.
func (s *Store) retrain(ctx context.Context) error {
	meta, err := s.dictMeta()
	if err != nil {
		return err
	}
	var ids []ID
	var samples [][]byte
	sampled := 0
	err = s.scan(prefixBlob, func(k, v []byte) error {
		var id ID
		copy(id[:], k[len(prefixBlob):])
		ids = append(ids, id)
		if sampled < dictMaxSamples {
			plain, err := s.decodeBlob(id, v)
			if err != nil {
				return err
			}
			samples = append(samples, bytes.Clone(plain))
			sampled += len(plain)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if sampled < dictMinSamples || (meta.ID != 0 && len(ids) < 2*meta.Blobs) {
		return nil
	}
	// A dictionary ID derived from the samples, in zstd's user range.
	h := Hash(bytes.Join(samples, nil))
	newID := 32768 + binary.BigEndian.Uint32(h[:4])%(1<<31-32768)
	d, err := dict.BuildZstdDict(samples, dict.Options{MaxDictSize: dictMaxSize, HashBytes: 6, ZstdDictID: newID, ZstdLevel: zstd.EncoderLevel(s.opts.CompressionLevel)})
	if err != nil {
		return nil // too little structure to train on: keep what we have
	}
	// The dictionary is durable before any blob needs it.
	nm, _ := Marshal(dictMeta{ID: newID, Blobs: len(ids)})
	b := s.db.NewBatch()
	b.Set(dictKey(newID), d, nil)
	b.Set(keyDictMeta, nm, nil)
	if err := b.Commit(pebble.Sync); err != nil {
		b.Close()
		return err
	}
	b.Close()
	if err := s.loadCodecs(); err != nil {
		return err
	}
	// Re-encode every blob, a batch at a time.
	b = s.db.NewBatch()
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			b.Close()
			return err
		}
		v, closer, err := s.db.Get(blobKey(id))
		if err != nil {
			b.Close()
			return wrapCorrupt(err)
		}
		plain, err := s.decodeBlob(id, v)
		closer.Close()
		if err != nil {
			b.Close()
			return err
		}
		b.Set(blobKey(id), s.encodeBlob(plain), nil)
		if b.Len() > 64<<10 {
			if err := b.Commit(pebble.NoSync); err != nil {
				b.Close()
				return err
			}
			b.Close()
			b = s.db.NewBatch()
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		b.Close()
		return err
	}
	b.Close()
	// Every blob now uses the new dictionary: drop the others.
	var old [][]byte
	s.scan(prefixDict, func(k, _ []byte) error {
		if binary.BigEndian.Uint32(k[len(prefixDict):]) != newID {
			old = append(old, bytes.Clone(k))
		}
		return nil
	})
	if len(old) > 0 {
		b = s.db.NewBatch()
		for _, k := range old {
			b.Delete(k, nil)
		}
		if err := b.Commit(pebble.Sync); err != nil {
			b.Close()
			return err
		}
		b.Close()
		return s.loadCodecs()
	}
	return nil
}

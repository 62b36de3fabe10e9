package traces

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// BenchmarkCorpus measures the store on the synthetic corpus: 50
// scenarios x 5 runs x 4 models, each run with a ~20 KB tool list, 6-10 model
// turns, 5-10 tool calls and 10-30 HTTP calls with 0.5-5 KB JSON bodies.
// Every figure is a ratio to a baseline measured in the same run, because
// the machine is shared and noisy:
//
//   - size_ratio: the store on disk after GC and compaction, over gzip -9 of
//     the same runs written as JSON lines (one file, as a cassette library
//     would; per-run cassettes compress worse, so this is the harder bar).
//   - load_ratio: loading a run from the store (every payload verified) over
//     reading the same run's bytes from the JSON-lines file and decoding them.
//
// Run it with: go test -run '^$' -bench BenchmarkCorpus -benchtime 1x ./traces
func BenchmarkCorpus(b *testing.B) {
	for range b.N {
		benchCorpus(b)
	}
}

func benchCorpus(b *testing.B) {
	scenarios := 50
	if n, err := strconv.Atoi(os.Getenv("BENCH_CORPUS_SCENARIOS")); err == nil && n > 0 {
		scenarios = n // a smaller corpus for quick iterations; figures use 50
	}
	c := newCorpus(42, scenarios, 5, 4)
	dir := b.TempDir()
	s, err := Open(filepath.Join(dir, "store"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()

	// JSON lines: the manifest and then one line per event, run after run.
	jl, err := os.Create(filepath.Join(dir, "runs.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	type span struct{ off, n int64 }
	var spans []span
	var refs []string
	w := bufio.NewWriter(jl)
	var off int64
	var rawJSONL int64
	var ingest time.Duration
	err = c.all(func(ref string, run *Run) error {
		start := off
		for _, v := range append([]any{run.Manifest}, anySlice(run.Events)...) {
			line, _ := json.Marshal(v)
			line = append(line, '\n')
			w.Write(line)
			off += int64(len(line))
		}
		spans = append(spans, span{start, off - start})
		refs = append(refs, ref)
		t0 := time.Now()
		_, err := s.PutRun(run, ref)
		ingest += time.Since(t0)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	w.Flush()
	jl.Close()
	rawJSONL = off
	runs := len(spans)

	gz := gzipSize(b, filepath.Join(dir, "runs.jsonl"))
	if _, err := s.GC(context.Background()); err != nil {
		b.Fatal(err)
	}
	st, err := s.Stats()
	if err != nil {
		b.Fatal(err)
	}
	openDisk := st.DiskBytes
	// What stays on disk once the command that ran GC has exited.
	s.Close()
	if st.DiskBytes, err = dirSize(filepath.Join(dir, "store")); err != nil {
		b.Fatal(err)
	}
	breakdown := diskBreakdown(filepath.Join(dir, "store"))
	if s, err = Open(filepath.Join(dir, "store"), nil); err != nil {
		b.Fatal(err)
	}
	defer s.Close()

	// Loading: the same 300 runs, interleaved store / JSON lines.
	r := rand.New(rand.NewPCG(7, 7))
	f, _ := os.Open(filepath.Join(dir, "runs.jsonl"))
	defer f.Close()
	var storeT, jsonlT []time.Duration
	for i := 0; i < 300; i++ {
		k := r.IntN(runs)
		id, err := s.Ref(refs[k])
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if _, err := s.GetRun(id); err != nil {
			b.Fatal(err)
		}
		storeT = append(storeT, time.Since(t0))
		t0 = time.Now()
		buf := make([]byte, spans[k].n)
		if _, err := f.ReadAt(buf, spans[k].off); err != nil {
			b.Fatal(err)
		}
		if err := decodeJSONLRun(buf); err != nil {
			b.Fatal(err)
		}
		jsonlT = append(jsonlT, time.Since(t0))
	}

	// Pack round trip.
	var p1 bytes.Buffer
	t0 := time.Now()
	if _, err := s.Export(&p1); err != nil {
		b.Fatal(err)
	}
	exportT := time.Since(t0)
	d, err := Open(filepath.Join(dir, "imported"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	t0 = time.Now()
	if _, err := d.Import(bytes.NewReader(p1.Bytes()), nil); err != nil {
		b.Fatal(err)
	}
	importT := time.Since(t0)
	var p2 bytes.Buffer
	if _, err := d.Export(&p2); err != nil {
		b.Fatal(err)
	}
	identical := bytes.Equal(p1.Bytes(), p2.Bytes())
	if !identical {
		b.Error("second export differs from the first")
	}

	sizeRatio := float64(st.DiskBytes) / float64(gz)
	p50s, p50j := median(storeT), median(jsonlT)
	b.ReportMetric(sizeRatio, "size_ratio")
	b.ReportMetric(float64(st.StoredBytes)/float64(gz), "record_ratio")
	b.ReportMetric(float64(runs)/ingest.Seconds(), "runs/s")
	b.ReportMetric(float64(p50s.Microseconds())/1000, "load_p50_ms")
	b.ReportMetric(float64(p50s)/float64(p50j), "load_ratio")
	b.Logf("corpus: %d runs, %.1f MB as JSON lines (%.1f MB canonical), %d bases", runs, mb(rawJSONL), mb(st.RawBytes), st.Bases)
	b.Logf("gzip -9 of the JSON lines: %.2f MB", mb(gz))
	b.Logf("store after GC+compaction: %.2f MB on disk (%.2f MB of run records); ratio to gzip -9: %.3f (records alone %.3f)",
		mb(st.DiskBytes), mb(st.StoredBytes), sizeRatio, float64(st.StoredBytes)/float64(gz))
	b.Logf("compression %.1fx", st.CompressionRatio())
	b.Logf("on disk after close: %s (%.2f MB while open)", breakdown, mb(openDisk))
	b.Logf("ingest: %.0f runs/s (%.2f ms/run)", float64(runs)/ingest.Seconds(), ingest.Seconds()*1000/float64(runs))
	b.Logf("load one run, all payloads verified: p50 %.2f ms, p95 %.2f ms; JSON lines read+decode p50 %.2f ms; ratio %.2f",
		ms(p50s), ms(pct(storeT, 0.95)), ms(p50j), float64(p50s)/float64(p50j))
	b.Logf("pack: %.2f MB, export %.2f s, import %.2f s, second export byte-identical: %v", mb(int64(p1.Len())), exportT.Seconds(), importT.Seconds(), identical)
}

func anySlice(evs []Event) []any {
	out := make([]any, len(evs))
	for i := range evs {
		out[i] = evs[i]
	}
	return out
}

func decodeJSONLRun(buf []byte) error {
	var run Run
	lines := bytes.Split(bytes.TrimSuffix(buf, []byte("\n")), []byte("\n"))
	if err := json.Unmarshal(lines[0], &run.Manifest); err != nil {
		return err
	}
	run.Events = make([]Event, len(lines)-1)
	for i, l := range lines[1:] {
		if err := json.Unmarshal(l, &run.Events[i]); err != nil {
			return err
		}
	}
	return nil
}

func gzipSize(b *testing.B, path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	cw := &countWriter{}
	zw, _ := gzip.NewWriterLevel(cw, gzip.BestCompression)
	if _, err := io.Copy(zw, f); err != nil {
		b.Fatal(err)
	}
	zw.Close()
	return cw.n
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func median(d []time.Duration) time.Duration { return pct(d, 0.5) }

func pct(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

func mb(n int64) float64         { return float64(n) / (1 << 20) }
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkGetRun loads one run of the corpus, every payload verified.
func BenchmarkGetRun(b *testing.B) {
	s, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	c := newCorpus(42, 2, 2, 1)
	id, err := s.PutRun(c.run(1, 0, 1), "r")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := s.GetRun(id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanonical canonicalises a 20 KB tool list, indented (the
// canonicalizer's work) and already canonical (isCanonical's check, the
// common case: compare the two).
func BenchmarkCanonical(b *testing.B) {
	c := newCorpus(42, 1, 1, 1)
	var pretty bytes.Buffer
	json.Indent(&pretty, c.tools, "", "  ")
	for _, in := range []struct {
		name string
		data []byte
	}{{"indented", pretty.Bytes()}, {"canonical", c.tools}} {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			for range b.N {
				if _, err := Canonical(in.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPutRun stores runs of one scenario whose tool list and HTTP
// bodies are already in the store, as during a recording session.
func BenchmarkPutRun(b *testing.B) {
	s, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	c := newCorpus(42, 4, 64, 1)
	runs := make([]*Run, 64)
	for i := range runs {
		runs[i] = c.run(i%4, 0, i)
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.PutRun(runs[i%len(runs)], "r"); err != nil {
			b.Fatal(err)
		}
	}
}

// diskBreakdown sums the store's files by kind (tables, WAL, other).
func diskBreakdown(dir string) string {
	kinds := map[string]int64{}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, _ := d.Info()
		kind := filepath.Ext(path)
		if kind == "" {
			kind = d.Name()
		}
		kinds[kind] += info.Size()
		return nil
	})
	var parts []string
	for k, n := range kinds {
		parts = append(parts, fmt.Sprintf("%s %.2f MB", k, mb(n)))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// BenchmarkLevels compresses one run document of the synthetic corpus at
// each zstd level the store can use: speed (MB/s) and ratio, the figures
// behind Options.NoSyncLevel.
func BenchmarkLevels(b *testing.B) {
	c := newCorpus(42, 1, 1, 1)
	doc, err := c.run(0, 0, 0).document()
	if err != nil {
		b.Fatal(err)
	}
	for _, lvl := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault, zstd.SpeedBetterCompression, zstd.SpeedBestCompression} {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(lvl), zstd.WithEncoderConcurrency(1))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("level%d", lvl), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			var n int
			for range b.N {
				n = len(enc.EncodeAll(doc, nil))
			}
			b.ReportMetric(float64(len(doc))/float64(n), "ratio")
		})
		enc.Close()
	}
}

package o200k

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer/codec"
)

// reference is the tokenizer's own count.
func reference(t testing.TB, text string) int {
	t.Helper()
	n, err := codec.NewO200kBase().Count(text)
	if err != nil {
		t.Fatalf("the tokenizer's Count: %v", err)
	}
	return n
}

func check(t testing.TB, text string) {
	t.Helper()
	got, err := Count(text)
	if err != nil {
		t.Fatalf("Count(%.60q): %v", text, err)
	}
	if want := reference(t, text); got != want {
		t.Fatalf("Count(%.60q) = %d, the tokenizer counts %d", text, got, want)
	}
}

// The counts of varied text are the tokenizer's: JSON as bench counts it
// (the repository's scenarios and fixtures), prose in several scripts,
// long pieces a merge works through (the tokenizer merges pieces of 96
// bytes and more another way), numbers, whitespace runs and invalid UTF-8.
func TestCountIsTheTokenizers(t *testing.T) {
	texts := []string{
		"", " ", "\n\n\n", "hello world", "Hello, World! It's 2026; we'll see.",
		`{"name":"list_clients","description":"List the clients of a site.","input_schema":{"type":"object","properties":{"site":{"type":"string"}}}}`,
		"Ünïcödé façade — naïve café; 日本語のテキスト; Привет, мир; مرحبا بالعالم; 🙂🙃 emoji",
		"1234567890 3.14159 -42 1e10 0x1F",
		strings.Repeat("a", 500), strings.Repeat("ab", 300), strings.Repeat("xyz123", 100),
		"supercalifragilisticexpialidocious" + strings.Repeat("antidisestablishmentarianism", 5),
		strings.Repeat(" ", 100) + "x" + strings.Repeat("\t", 50) + "\r\n\r\n",
		"bad \xff\xfe utf-8 \xc3", "VGhpcyBpcyBhIGxvbmcgYmFzZTY0IHN0cmluZyB3aXRob3V0IGFueSBzcGFjZXMgaW4gaXQgYXQgYWxs" + strings.Repeat("QUJD", 40),
	}
	for _, dir := range []string{"../../scenarios", "../../fakecentral"} {
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".json")) && len(texts) < 80 {
				if b, err := os.ReadFile(path); err == nil {
					texts = append(texts, string(b))
				}
			}
			return nil
		})
	}
	if len(texts) < 40 {
		t.Fatalf("only %d texts: the repository's files were not found", len(texts))
	}
	for _, s := range texts {
		check(t, s)
	}
}

// Random strings of letters, digits, punctuation, spaces and multi-byte
// runes, short and long.
func TestCountRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("aAbBeEsStT '’,.;:!?-_/\\\"{}[]0123456789 \n\t\réüß日本語🙂ـع")
	for range 300 {
		n := r.IntN(400)
		var b strings.Builder
		for range n {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		check(t, b.String())
	}
}

func FuzzCount(f *testing.F) {
	f.Add("hello world")
	f.Add(`{"a":[1,2,3],"b":"c d e"}`)
	f.Add(strings.Repeat("ab", 80))
	f.Add("日本語 \xff")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		check(t, s)
	})
}

// A damaged vocabulary is said, not counted with.
func TestParseDamaged(t *testing.T) {
	for name, f := range map[string]string{
		"header": "o200k_base 2\n" + file[len(header):],
		"short":  file[:len(file)-10],
		"empty":  "",
		"extra":  file + "x",
	} {
		if _, err := parse(f); err == nil {
			t.Errorf("%s: parse accepted a damaged vocabulary", name)
		}
	}
	if _, err := parse(file); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkCount(b *testing.B) {
	text := strings.Repeat(`{"name":"list_clients","description":"List the wireless clients of a site, with their SSID.","input_schema":{"type":"object"}},`, 40)
	b.Run("o200k", func(b *testing.B) {
		if _, err := load(); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			Count(text)
		}
	})
	b.Run("tokenizer", func(b *testing.B) {
		c := codec.NewO200kBase()
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			c.Count(text)
		}
	})
}

// BenchmarkLoad is building the vocabulary's index from the embedded file,
// what the first Count pays once.
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := parse(file); err != nil {
			b.Fatal(err)
		}
	}
}

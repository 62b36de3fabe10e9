package o200k

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dlclark/regexp2/v2"
	"github.com/tiktoken-go/tokenizer/codec"
)

// repoFiles are the texts of up to n of the repository's YAML and JSON
// files (scenarios, fixtures): JSON and YAML as bench counts them.
func repoFiles(n int) []string {
	var out []string
	for _, dir := range []string{"../../scenarios", "../../fakecentral"} {
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".json")) && len(out) < n {
				if b, err := os.ReadFile(path); err == nil {
					out = append(out, string(b))
				}
			}
			return nil
		})
	}
	return out
}

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
	texts = append(texts, repoFiles(80-len(texts))...)
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

// matcherPieces are the pieces the tokenizer's matcher cuts text into:
// regexp2 with the pattern's generated matcher, which the codec package
// registers.
func matcherPieces(t testing.TB, text string) []string {
	t.Helper()
	re := regexp2.MustCompile(Pattern, regexp2.None)
	var out []string
	m, err := re.FindStringMatch(text)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatalf("the matcher: %v", err)
	}
	return out
}

func splitPieces(text string) []string {
	var sp splitter
	var out []string
	for i := 0; i < len(text); {
		end := sp.next(text, i)
		if end < 0 {
			i -= end
			continue
		}
		out = append(out, pieceOf(text[i:end]))
		i = end
	}
	return out
}

func checkSplit(t testing.TB, text string) {
	t.Helper()
	got, want := splitPieces(text), matcherPieces(t, text)
	if !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("split(%.80q): piece %d is %q, the matcher's %q", text, i, got[i], want[i])
			}
		}
		t.Fatalf("split(%.80q): %d pieces, the matcher's %d", text, len(got), len(want))
	}
}

// The pieces are the matcher's, piece by piece: each alternative of the
// pattern and where one gives way to the next (a word opened by a space or
// a mark, capitals that give a letter back, contractions in either case and
// as 's, spaces before a word, a line break or the end, the matcher's
// first line break among spaces, DEL that it skips, invalid bytes), in
// several scripts, over the repository's files and random text.
func TestSplitIsTheMatchers(t *testing.T) {
	texts := []string{
		"", "a", "A", "Hello", "HELLO", "HELLOworld", "helloWORLD", "iPhone", "McDonald's", "DON'T", "they'RE", "we'Ve",
		"I'll", "it'LL", "she'd", "I'M", "x'ſ", "X'ſt", "o'\u017f", "'s", "a's't", "rock'n'roll", "l'élève",
		" hello", "  hello", "\thello", "\t\thello", " \nhello", "a  b", "a \n b", "a\r\n\r\nb", "end  ", "end \n ", "x\n\n\n",
		"1", "12345678", "x1y22z333", "١٢٣٤", "Ⅻ½", " 3", "-3.14e10",
		"{\"a\":[1,2]}", "  {{", " //", "foo//\n\nbar", "a/\r\n/b", "!!!\n", " !?", "\u00a0\u00a0x", "\u3000日本\u3000語",
		"e\u0301\u0301cole", "\u0301abc", " \u0301", "\u0301\u0301", "Ä\u0308b", "ǅungla", "ǅ", "ᾈᾉ", "ʰello", "ʰʰ",
		"日本語のテキスト", "Привет, мир", "مرحبا بالعالم", "🙂🙃 emoji", "a🙂b",
		"bad \xff\xfe utf-8 \xc3", "\xff", "\xffabc", " \xffabc", "a\xe6\x97b", "\xef\xbf\xbd", "x\xc5", "'\xc5",
		strings.Repeat(" ", 100) + "x" + strings.Repeat("\t", 50) + "\r\n\r\n",
		"\u0085x\u2028y\u2029z\u000bw\u000cv", "a\x7fb", "\x7f", " \x7f\x7f!", "x \x7f\n", "\x00\x01\x1f",
	}
	texts = append(texts, repoFiles(120)...)
	for _, s := range texts {
		checkSplit(t, s)
		check(t, s)
	}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune("aAbBeEsStTlLdDmMrRvV '’,.;:!?-_/\x7f\x00\\\"{}[]0123456789 \n\t\r\u00a0\u3000éüßÄǅʰ\u0301\u0308日本語١٢Ⅻ½🙂ـعſ\ufffd")
	for range 2000 {
		var b strings.Builder
		for range r.IntN(60) {
			if r.IntN(40) == 0 {
				b.WriteByte(byte(0x80 + r.IntN(0x80))) // an invalid byte
				continue
			}
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		checkSplit(t, b.String())
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("hello world")
	f.Add("I'll DON'T x'ſ")
	f.Add("e\u0301cole \u00a0\n\n x")
	f.Add("日本語 \xff")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		checkSplit(t, s)
	})
}

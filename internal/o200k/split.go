package o200k

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The split pattern (Pattern), matched by hand as the tokenizer's
// generated regexp2 matcher matches it: seven alternatives tried in
// order at a piece's start, the first that matches taking the piece
// (the alternation is atomic), each with the backtracking of its greedy
// loops that can give back:
//
//	A  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+('s|'t|'re|'ve|'m|'ll|'d)?
//	B  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*('s|'t|'re|'ve|'m|'ll|'d)?
//	C  \p{N}{1,3}
//	D   ?[^\s\p{L}\p{N}]+[\r\n/]*
//	E  \s*[\r\n]+
//	F  \s+(?!\S)
//	G  \s+
//
// Where the generated matcher departs from the pattern, the split departs
// with it: its backtracking of E's \s* goes to the first line break among
// the spaces, not the last; and its classes of ASCII runes are bitmaps
// that leave DEL (0x7f) out of [^\r\n\p{L}\p{N}] and [^\s\p{L}\p{N}], so
// that no alternative matches at a DEL and the matcher skips it, as a
// regular expression skips what it does not match: it is in no piece, and
// counts no token. Every other rune starts a match of one of them (a space
// G, a letter A or B, a number C, any other rune D). \s is
// unicode.IsSpace, as in regexp2; the contractions are case-insensitive as
// the matcher compiled them ('s also as 'ſ). regexp2 matches runes: an
// invalid byte is one U+FFFD (Go's []rune conversion), and the piece it is
// in is made of the runes (pieceOf).

// Rune classes of the pattern, for ASCII from a table.
const (
	clsU     = 1 << iota // \p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}: a word's capitals
	clsL                 // \p{Ll}\p{Lm}\p{Lo}\p{M}: a word's small letters
	clsN                 // \p{N}
	clsSpace             // \s (unicode.IsSpace)
	clsP                 // [^\r\n\p{L}\p{N}]: what may open a word
	clsQ                 // [^\s\p{L}\p{N}]: punctuation and symbols
)

// The generated matcher's bitmaps of ASCII runes in [^\r\n\p{L}\p{N}]
// and [^\s\p{L}\p{N}] (bit r of the pair, low word first).
var asciiP, asciiQ = [2]uint64{0xfc00ffffffffdbff, 0x78000001f8000001}, [2]uint64{0xfc00fffeffffc1ff, 0x78000001f8000001}

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		c := classOf(r) &^ (clsP | clsQ)
		if asciiP[r/64]&(1<<(r%64)) != 0 {
			c |= clsP
		}
		if asciiQ[r/64]&(1<<(r%64)) != 0 {
			c |= clsQ
		}
		t[r] = c
	}
	return t
}()

func classOf(r rune) uint8 {
	var c uint8
	letter, number, space := unicode.IsLetter(r), unicode.Is(unicode.N, r), unicode.IsSpace(r)
	if unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M) {
		c |= clsU
	}
	if unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M) {
		c |= clsL
	}
	if number {
		c |= clsN
	}
	if space {
		c |= clsSpace
	}
	if r != '\r' && r != '\n' && !letter && !number {
		c |= clsP
	}
	if !space && !letter && !number {
		c |= clsQ
	}
	return c
}

// at decodes the rune at s[i:] (an invalid byte is utf8.RuneError, 1
// byte) with its classes.
func at(s string, i int) (cls uint8, size int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return classOf(r), n
}

// run is the end of the run of runes of class c from i.
func run(s string, i int, c uint8) int {
	for i < len(s) {
		cls, n := at(s, i)
		if cls&c == 0 {
			break
		}
		i += n
	}
	return i
}

// splitter cuts text into the pattern's pieces; it keeps its buffer from
// piece to piece.
type splitter struct {
	starts []int // rune starts of a run of capitals (alternative A's backtracking)
}

// next returns the end of the piece that starts at i (< len(s)), or -n if
// none does: the rune there, of n bytes, is in no piece.
func (sp *splitter) next(s string, i int) int {
	cls, n := at(s, i)
	if end := sp.word(s, i, cls, n); end > 0 {
		return end
	}
	if cls&clsN != 0 { // C
		end := i + n
		for k := 1; k < 3 && end < len(s); k++ {
			c, m := at(s, end)
			if c&clsN == 0 {
				break
			}
			end += m
		}
		return end
	}
	j := i // D: an optional space (atomic), punctuation, then \r, \n and /
	if s[i] == ' ' {
		j++
	}
	if end := run(s, j, clsQ); end > j {
		for end < len(s) && (s[end] == '\r' || s[end] == '\n' || s[end] == '/') {
			end++
		}
		return end
	}
	ws := run(s, i, clsSpace)
	if ws == i {
		return -n
	}
	// E: the spaces up to the first line break among them (the matcher's
	// backtracking), and the line breaks from there.
	if k := strings.IndexAny(s[i:ws], "\r\n"); k >= 0 {
		end := i + k
		for end < len(s) && (s[end] == '\r' || s[end] == '\n') {
			end++
		}
		return end
	}
	if ws == len(s) { // F: spaces that end the text
		return ws
	}
	// F: spaces but the last, which the next piece may open with; else G.
	if _, last := utf8.DecodeLastRuneInString(s[i:ws]); ws-last > i {
		return ws - last
	}
	return ws
}

// word matches alternatives A and B at i, whose rune has classes cls and
// size n; 0 if neither matches.
func (sp *splitter) word(s string, i int, cls uint8, n int) int {
	open := 0 // [^\r\n\p{L}\p{N}]?: tried with the rune, then without
	if cls&clsP != 0 {
		open = n
	}
	// A: capitals (greedy, giving back one at a time) then at least one
	// small letter.
	for p := open; ; p = 0 {
		j := i + p
		sp.starts = sp.starts[:0]
		k := j
		for k < len(s) {
			c, m := at(s, k)
			if c&clsU == 0 {
				break
			}
			sp.starts = append(sp.starts, k)
			k += m
		}
		for b := len(sp.starts); b >= 0; b-- {
			pos := k
			if b < len(sp.starts) {
				pos = sp.starts[b]
			}
			if pos < len(s) {
				if c, m := at(s, pos); c&clsL != 0 {
					end := run(s, pos+m, clsL)
					return end + contraction(s, end)
				}
			}
		}
		if p == 0 {
			break
		}
	}
	// B: at least one capital, then small letters.
	for p := open; ; p = 0 {
		j := i + p
		if k := run(s, j, clsU); k > j {
			end := run(s, k, clsL)
			return end + contraction(s, end)
		}
		if p == 0 {
			break
		}
	}
	return 0
}

// contraction is the length of the optional ('s|'t|'re|'ve|'m|'ll|'d)
// at i, case-insensitive as the matcher compiled it.
func contraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return 0
	}
	switch s[i+1] {
	case 'S', 'T', 's', 't':
		return 2
	case 'M', 'm', 'D', 'd':
		return 2
	case 'R', 'r', 'V', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return 3
		}
	case 'L', 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return 3
		}
	case 0xc5: // ſ (U+017F) is 0xc5 0xbf
		if strings.HasPrefix(s[i+1:], "ſ") {
			return 1 + len("ſ")
		}
	}
	return 0
}

// pieceOf is the piece s[i:end] as the matcher returns it: made of runes,
// each invalid byte one U+FFFD.
func pieceOf(s string) string {
	for k := 0; k < len(s); k++ {
		if s[k] >= utf8.RuneSelf {
			if !utf8.ValidString(s[k:]) {
				return string([]rune(s))
			}
			break
		}
	}
	return s
}

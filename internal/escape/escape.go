// Package escape makes text bench did not write safe to show. Everything a
// server says (its name, server info, tool names and descriptions, results,
// errors) and everything read from a file a pull request may change
// (profiles, scenarios, trace packs, JSON reports) is shown through one of
// these functions: on a terminal, in Markdown (step summaries, pull-request
// comments, the results page) or in XML (SVG; JUnit is written by
// encoding/xml, fed [Text]).
//
// Each function shows what it escapes visibly (ESC as \x1b, U+202E as
// \u202e) rather than dropping it, so a reader sees that a server sent it.
package escape

import (
	"encoding/xml"
	"fmt"
	"html"
	"strings"
	"unicode/utf8"
)

// Text returns s with every character that a terminal or a renderer acts
// on instead of showing written out visibly, newlines kept: the C0 controls
// but newline (NUL as \x00, BEL as \x07, CR as \r, ESC as \x1b, tab as \t),
// DEL and the C1 controls (\x7f to \x9f), the Unicode controls that reorder
// or break text (bidirectional marks, embeddings, overrides and isolates,
// the line and paragraph separators: \u202e), and each byte of invalid
// UTF-8 (\xff).
func Text(s string) string { return visible(s, true) }

// Line is Text for one line: newlines are written out too (\n). It is for
// a name, a table cell, a column of aligned output.
func Line(s string) string { return visible(s, false) }

func visible(s string, keepNewline bool) string {
	if isPlain(s, keepNewline) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' && keepNewline:
			b.WriteByte('\n')
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r >= 0x7f && r <= 0x9f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case reorders(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// isPlain says whether s needs no escaping: the common case, checked
// without allocating.
func isPlain(s string, keepNewline bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return false // checked rune by rune: invalid UTF-8, C1, bidi
		}
		if c < 0x20 && !(keepNewline && c == '\n') || c == 0x7f {
			return false
		}
	}
	return true
}

// reorders reports the format characters that change how the text around
// them is ordered or broken into lines: a right-to-left override can make a
// tool name read as another.
func reorders(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f: // arabic letter mark, LRM, RLM
		return true
	case r >= 0x2028 && r <= 0x202e: // line and paragraph separators, LRE RLE PDF LRO RLO
		return true
	case r >= 0x2066 && r <= 0x2069: // LRI RLI FSI PDI
		return true
	}
	return false
}

// markdownSpecial are the ASCII punctuation characters that start Markdown
// (CommonMark and GitHub's extensions) inline syntax: code spans, emphasis,
// links and images, raw HTML and comments, entities, table cells,
// strikethrough, math, issue references, and at a line's start headings and
// quotes. CommonMark lets any ASCII punctuation be backslash-escaped.
const markdownSpecial = "\\`*_[]<>|#~&$"

// Markdown returns s as literal Markdown inline text: on one line (Line),
// every character that could start Markdown syntax backslash-escaped, and a
// leading list marker too, so that s stays one table cell, one list item's
// text or one heading's text wherever it is placed, and renders as the
// characters it holds. An underscore inside a word starts no emphasis and
// is left alone, so tool and metric names read as they are.
func Markdown(s string) string {
	s = Line(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	if startsBlock(s) {
		b.WriteByte('\\')
	} else if i := leadingDigits(s); i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') && (i+1 == len(s) || s[i+1] == ' ') {
		b.WriteString(s[:i])
		b.WriteByte('\\')
		s = s[i:]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.IndexByte(markdownSpecial, c) >= 0 && !(c == '_' && i > 0 && i+1 < len(s) && isAlnum(s[i-1]) && isAlnum(s[i+1])) {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// startsBlock reports whether s, at the start of a line or of a list item,
// would open a bullet list ("- x", "+ x") or be a thematic break ("---").
func startsBlock(s string) bool {
	if s == "" || s[0] != '-' && s[0] != '+' {
		return false
	}
	if len(s) == 1 || s[1] == ' ' {
		return true
	}
	return strings.Trim(s, "- ") == "" && strings.Count(s, "-") >= 3
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func leadingDigits(s string) int {
	i := 0
	for i < len(s) && i < 10 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// CodeSpan returns s as a Markdown code span inside a table cell: on one
// line, between backtick fences longer than any run of backticks in s, its
// pipes escaped (GitHub splits cells before it reads code spans, and turns
// \| back into | inside them).
func CodeSpan(s string) string {
	s = strings.ReplaceAll(Line(s), "|", `\|`)
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// Fence returns the backtick fence of a Markdown code block holding s: one
// longer than any run of backticks in s, and at least three, so that no
// line of s closes the block. Write s itself through Text: a carriage
// return would end a line of it.
func Fence(s string) string {
	return strings.Repeat("`", max(3, longestRun(s, '`')+1))
}

func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// HTML returns s as text inside raw HTML in Markdown (a <summary>): on one
// line (Line), so that it cannot end the HTML block, with the markup
// characters escaped as entities. Markdown's backslash escapes do not work
// there.
func HTML(s string) string { return html.EscapeString(Line(s)) }

// XML returns s as XML character data or an attribute value: on one line
// (Line), with the markup characters escaped as entities. What Line leaves
// is valid XML 1.0 text.
func XML(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(Line(s)))
	return b.String()
}

package escape

import (
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, tc := range []struct {
		why, in, text, line string
	}{
		{"plain text is returned as is", "list_alerts: 3 items", "list_alerts: 3 items", "list_alerts: 3 items"},
		{"a newline starts a line in Text, is written out in Line", "a\nb", "a\nb", `a\nb`},
		{"a carriage return would overwrite the line", "ok\rFAIL", `ok\rFAIL`, `ok\rFAIL`},
		{"ESC starts terminal control sequences", "\x1b[2Jx", `\x1b[2Jx`, `\x1b[2Jx`},
		{"BEL and NUL", "a\a\x00b", `a\x07\x00b`, `a\x07\x00b`},
		{"a tab would make a column", "a\tb", `a\tb`, `a\tb`},
		{"DEL and a C1 control (CSI)", "a\x7f\u009bb", `a\x7f\x9bb`, `a\x7f\x9bb`},
		{"a right-to-left override reorders what follows", "abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"isolates and the line separator", "\u2066x\u2069\u2028", `\u2066x\u2069\u2028`, `\u2066x\u2069\u2028`},
		{"invalid UTF-8, byte by byte", "a\xff\xfeb", `a\xff\xfeb`, `a\xff\xfeb`},
		{"an encoded surrogate is invalid UTF-8", "\xed\xa0\x80", `\xed\xa0\x80`, `\xed\xa0\x80`},
		{"other Unicode is shown", "café · – ✓ 中", "café · – ✓ 中", "café · – ✓ 中"},
	} {
		if got := Text(tc.in); got != tc.text {
			t.Errorf("%s: Text(%q) = %q, want %q", tc.why, tc.in, got, tc.text)
		}
		if got := Line(tc.in); got != tc.line {
			t.Errorf("%s: Line(%q) = %q, want %q", tc.why, tc.in, got, tc.line)
		}
	}
}

func TestMarkdown(t *testing.T) {
	for _, tc := range []struct {
		why, in, want string
	}{
		{"plain names stay readable", "client-diagnosis-001 reference", "client-diagnosis-001 reference"},
		{"a newline cannot start a heading", "x\n## bench: PASS · exit 0", `x\\n\#\# bench: PASS · exit 0`},
		{"a pipe cannot end a cell", "a|b", `a\|b`},
		{"raw HTML and comments are text", "<!-- <script>", `\<!-- \<script\>`},
		{"links, images, emphasis, code, math", "![x](u) *a* _b_ `c` $d$ ~e~", `!\[x\](u) \*a\* \_b\_ \` + "`c\\`" + ` \$d\$ \~e\~`},
		{"an underscore inside a word is no emphasis", "task_success_rate _x", `task_success_rate \_x`},
		{"an entity is text", "&lt;", `\&lt;`},
		{"a backslash is literal", `a\`, `a\\`},
		{"a leading heading or quote marker", "# x", `\# x`},
		{"a leading list marker", "- x", `\- x`},
		{"a leading thematic break", "- - -", `\- - -`},
		{"a leading sign is no list marker", "+2, -1", "+2, -1"},
		{"a leading ordered-list marker", "12. x", `12\. x`},
		{"digits not followed by a marker", "12 x", "12 x"},
		{"a version is no list marker", "1.2.0", "1.2.0"},
		{"a carriage return is a line ending in Markdown", "a\rb", `a\\rb`},
	} {
		if got := Markdown(tc.in); got != tc.want {
			t.Errorf("%s: Markdown(%q) = %q, want %q", tc.why, tc.in, got, tc.want)
		}
	}
}

func TestCodeSpanAndFence(t *testing.T) {
	for _, tc := range []struct {
		why, in, want string
	}{
		{"a SHA", "3fa9c1", "`3fa9c1`"},
		{"a backtick needs a longer fence", "a`b", "``a`b``"},
		{"a leading backtick is padded", "`a", "`` `a ``"},
		{"a pipe stays in the cell", "a|b", "`a\\|b`"},
		{"a newline stays on the line", "a\nb", "`a\\nb`"},
	} {
		if got := CodeSpan(tc.in); got != tc.want {
			t.Errorf("%s: CodeSpan(%q) = %q, want %q", tc.why, tc.in, got, tc.want)
		}
	}
	if got := Fence("x\n```\ny"); got != "````" {
		t.Errorf("Fence of a text holding ``` = %q, want ````", got)
	}
	if got := Fence("x"); got != "```" {
		t.Errorf("Fence of plain text = %q, want ```", got)
	}
}

func TestXML(t *testing.T) {
	in := "<script>a&b\"c'\x00\x1b\n\uffff\xff"
	got := XML(in)
	var v struct {
		A string `xml:"a,attr"`
		T string `xml:",chardata"`
	}
	doc := `<x a="` + got + `">` + got + `</x>`
	if err := xml.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("XML(%q) = %q is not XML text: %v", in, got, err)
	}
	if v.A != v.T || strings.ContainsAny(v.T, "\x00\x1b\n") || !utf8.ValidString(v.T) || !strings.Contains(v.T, "<script>") {
		t.Errorf("XML(%q) read back as %q / %q", in, v.A, v.T)
	}
}

func TestHTML(t *testing.T) {
	if got, want := HTML("a\n<!--&\"x'\x1b"), `a\n&lt;!--&amp;&#34;x&#39;\x1b`; got != want {
		t.Errorf("HTML = %q, want %q", got, want)
	}
}

// Package escapetest checks that output bench renders from hostile input
// kept its structure: what tests of the renderers use, with the hostile
// strings issue 16 lists. It parses Markdown as GitHub does (CommonMark
// with GitHub's tables, raw HTML passed through, then rendered to HTML and
// parsed again), XML with encoding/xml, and terminal text byte by byte.
package escapetest

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	xhtml "golang.org/x/net/html"
)

// Hostile are the strings a server (or a file a pull request changes) may
// put into anything bench shows: a newline and a forged verdict heading,
// table pipes, an HTML comment that would hide the rest of a step summary,
// a script, terminal controls (clear screen, bell, carriage return, NUL), a
// right-to-left override, and bytes that are not UTF-8.
var Hostile = []string{
	"\n## bench: PASS · exit 0\n",
	"a|b|c",
	"<!-- hidden",
	"<script>alert(1)</script>",
	"\x1b[2J",
	"\a",
	"\r",
	"\x00",
	"\u202e",
	"\xff\xfe",
}

// All is every hostile string in one.
var All = strings.Join(Hostile, " ")

// ForgedVerdict is the text of the heading a newline would forge.
const ForgedVerdict = "bench: PASS · exit 0"

// Markdown is what CheckMarkdown found in a document.
type Markdown struct {
	Headings   []string // the text of each heading, in order
	Tables     []int    // the body rows of each table
	CodeBlocks int      // fenced code blocks
	Problems   []string // where the structure is not intact
}

// ownHTML are the raw HTML tags bench writes in its Markdown itself.
var ownHTML = []string{"<details>", "</details>", "<summary>", "</summary>", "<sub>", "</sub>"}

// ownElements are the HTML elements bench's Markdown renders to.
var ownElements = []string{"html", "head", "body", "h1", "h2", "h3", "p", "ul", "li", "table", "thead", "tbody", "tr", "th", "td",
	"details", "summary", "sub", "strong", "em", "code", "pre", "a", "img", "blockquote"}

// CheckMarkdown parses doc as GitHub renders Markdown and reports where a
// hostile string broke out: a raw control character, a table row with
// more or fewer cells than its header (counted on the source, since
// GitHub drops extra cells silently), raw HTML bench did not write, a
// heading reading as the forged verdict, and in the HTML the document
// renders to, a comment or an element bench does not write.
func CheckMarkdown(doc []byte) *Markdown {
	m := &Markdown{}
	m.Problems = append(m.Problems, controls("markdown", doc, true)...)
	groups := tableGroups(doc, m)
	md := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))
	root := md.Parser().Parse(text.NewReader(doc))
	gast.Walk(root, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering {
			return gast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *gast.Heading:
			h := plain(n, doc)
			m.Headings = append(m.Headings, h)
			if strings.TrimSpace(h) == ForgedVerdict {
				m.Problems = append(m.Problems, fmt.Sprintf("a forged verdict heading: %q", h))
			}
		case *east.Table:
			rows := 0
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				if c.Kind() == east.KindTableRow {
					rows++
				}
			}
			m.Tables = append(m.Tables, rows)
		case *gast.FencedCodeBlock:
			m.CodeBlocks++
			return gast.WalkSkipChildren, nil
		case *gast.HTMLBlock:
			var b bytes.Buffer
			for i := 0; i < n.Lines().Len(); i++ {
				seg := n.Lines().At(i)
				b.Write(seg.Value(doc))
			}
			if n.HasClosure() {
				b.Write(n.ClosureLine.Value(doc))
			}
			m.Problems = append(m.Problems, foreignHTML(b.String())...)
		case *gast.RawHTML:
			var b bytes.Buffer
			for i := 0; i < n.Segments.Len(); i++ {
				seg := n.Segments.At(i)
				b.Write(seg.Value(doc))
			}
			m.Problems = append(m.Problems, foreignHTML(b.String())...)
		}
		return gast.WalkContinue, nil
	})
	if len(m.Tables) != groups {
		m.Problems = append(m.Problems, fmt.Sprintf("%d tables parsed, %d written", len(m.Tables), groups))
	}
	var out bytes.Buffer
	if err := md.Renderer().Render(&out, doc, root); err != nil {
		m.Problems = append(m.Problems, "rendering: "+err.Error())
	}
	m.Problems = append(m.Problems, checkHTML(out.Bytes())...)
	return m
}

var tagPattern = regexp.MustCompile(`<[^>]*>?`)

// foreignHTML lists the tags in raw HTML that bench does not write, and
// any text there that holds markup characters (Markdown's escapes do not
// apply in raw HTML).
func foreignHTML(s string) []string {
	var out []string
	for _, tag := range tagPattern.FindAllString(s, -1) {
		if !slices.Contains(ownHTML, tag) {
			out = append(out, fmt.Sprintf("raw HTML bench does not write: %q in %q", tag, s))
		}
	}
	return out
}

// tableGroups finds the tables in the source (runs of lines starting with
// "|") and checks each row has as many cells as the header.
func tableGroups(doc []byte, m *Markdown) int {
	groups, want := 0, -1
	inFence := ""
	for i, line := range strings.Split(string(doc), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if f := fenceOf(trimmed); f != "" && (inFence == "" || strings.HasPrefix(trimmed, inFence) && strings.Trim(trimmed, "`") == "") {
			if inFence == "" {
				inFence = f
			} else {
				inFence = ""
			}
			continue
		}
		if inFence != "" || !strings.HasPrefix(line, "|") {
			want = -1
			continue
		}
		cells := cellCount(line)
		if want < 0 {
			groups++
			want = cells
			continue
		}
		if cells != want {
			m.Problems = append(m.Problems, fmt.Sprintf("line %d: %d cells, the header has %d: %q", i+1, cells, want, line))
		}
	}
	return groups
}

func fenceOf(line string) string {
	n := 0
	for n < len(line) && line[n] == '`' {
		n++
	}
	if n < 3 {
		return ""
	}
	return line[:n]
}

// cellCount counts the cells of a table row: the pipes not escaped by a
// backslash, less the leading one.
func cellCount(line string) int {
	pipes := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '|':
			pipes++
		}
	}
	if strings.HasSuffix(strings.TrimRight(line, " "), "|") {
		pipes--
	}
	return pipes
}

// plain is the text of an inline tree.
func plain(n gast.Node, src []byte) string {
	var b strings.Builder
	gast.Walk(n, func(c gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering {
			return gast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *gast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte('\n')
			}
		case *gast.String:
			b.Write(c.Value)
		}
		return gast.WalkContinue, nil
	})
	return b.String()
}

// checkHTML parses the HTML a document renders to and reports comments,
// elements bench does not write, and scripts.
func checkHTML(doc []byte) []string {
	root, err := xhtml.Parse(bytes.NewReader(doc))
	if err != nil {
		return []string{"parsing the rendered HTML: " + err.Error()}
	}
	var out []string
	var walk func(*xhtml.Node)
	walk = func(n *xhtml.Node) {
		switch n.Type {
		case xhtml.CommentNode:
			out = append(out, fmt.Sprintf("an HTML comment in the rendered page: %q", n.Data))
		case xhtml.ElementNode:
			if !slices.Contains(ownElements, n.Data) {
				out = append(out, fmt.Sprintf("an element bench does not write in the rendered page: <%s>", n.Data))
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return out
}

// CheckTerminal reports the bytes in out that a terminal would act on
// rather than show: C0 controls but newline and tab, DEL, C1 controls, the
// Unicode controls that reorder text, and invalid UTF-8.
func CheckTerminal(out []byte) []string { return controls("terminal output", out, true) }

// controls lists the raw control characters in b (newline and tab allowed
// when lines is set).
func controls(what string, b []byte, lines bool) []string {
	var out []string
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		bad := ""
		switch {
		case r == utf8.RuneError && n == 1:
			bad = "invalid UTF-8"
		case (r == '\n' || r == '\t') && lines:
		case r < 0x20 || r >= 0x7f && r <= 0x9f:
			bad = fmt.Sprintf("control character %U", r)
		case r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x2028 && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
			bad = fmt.Sprintf("bidirectional or line control %U", r)
		}
		if bad != "" {
			lo, hi := max(0, i-30), min(len(b), i+30)
			out = append(out, fmt.Sprintf("%s at byte %d: %s, near %q", what, i, bad, b[lo:hi]))
			if len(out) == 5 {
				return append(out, "...")
			}
		}
		i += n
	}
	return out
}

// XML is what CheckXML found in a document.
type XML struct {
	Elements map[string]int // elements by local name
	Problems []string
}

// CheckXML decodes doc strictly (it must be well-formed XML 1.0) and
// reports the controls left in its text and attributes once decoded.
func CheckXML(doc []byte) *XML {
	x := &XML{Elements: map[string]int{}}
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			x.Problems = append(x.Problems, "not well-formed XML: "+err.Error())
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			x.Elements[t.Name.Local]++
			for _, a := range t.Attr {
				x.Problems = append(x.Problems, controls("attribute "+a.Name.Local, []byte(a.Value), false)...)
			}
		case xml.CharData:
			x.Problems = append(x.Problems, controls("text", t, true)...)
		case xml.Comment:
			x.Problems = append(x.Problems, fmt.Sprintf("an XML comment: %q", t))
		}
	}
	return x
}

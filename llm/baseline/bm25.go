package baseline

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/mcpbench/bench/llm"
)

// BM25 parameters, the usual ones.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// scored is a tool and its BM25 score against the intent.
type scored struct {
	tool  llm.Tool
	score float64
}

// rank scores tools against query with BM25 and sorts them best first,
// ties by name so the order never depends on the input order.
func rank(query string, tools []llm.Tool, cache *Cache) []scored {
	docs := make([]*toolDoc, len(tools))
	var total int
	for i, t := range tools {
		docs[i] = cache.doc(t)
		total += docs[i].len
	}
	n := float64(len(tools))
	avg := 1.0
	if len(tools) > 0 && total > 0 {
		avg = float64(total) / n
	}
	q := unique(tokens(query))
	// Only the query's words count, so only their document frequencies are
	// needed: how many tools' documents hold each.
	df := make([]int, len(q))
	for j, w := range q {
		for _, d := range docs {
			if d.tf[w] > 0 {
				df[j]++
			}
		}
	}
	out := make([]scored, len(tools))
	for i, t := range tools {
		tf := docs[i].tf
		var s float64
		for j, w := range q {
			f := float64(tf[w])
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[j])+0.5)/(float64(df[j])+0.5)) // as in rareTermIDF
			s += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(docs[i].len)/avg))
		}
		out[i] = scored{tool: t, score: s}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].score != out[b].score {
			return out[a].score > out[b].score
		}
		return out[a].tool.Name < out[b].tool.Name
	})
	return out
}

// rareTermIDF is the idf of a term that only one of n tools has.
func rareTermIDF(n int) float64 {
	return math.Log(1 + (float64(n)-1+0.5)/1.5)
}

// Cache keeps the documents of the tools the baseline has ranked: a
// server's tools are the same every turn of every run, and tokenizing them
// was most of a turn's time. It is safe for concurrent use and bounded;
// share one across the Models of a batch (Options.Cache).
type Cache struct {
	mu   sync.Mutex
	docs map[toolName][]*toolDoc // only read once made
	size int
}

// toolName is what a tool's document is looked up by; the documents of
// tools that share it differ by schema.
type toolName struct{ name, description string }

// toolDoc is a tool's document as BM25 reads it: the count of each word
// and the number of words.
type toolDoc struct {
	schema []byte
	tf     map[string]int
	len    int
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{docs: map[toolName][]*toolDoc{}} }

const cacheMax = 1 << 14

// doc is the document of a tool (tokenizeTool), made once per tool.
func (c *Cache) doc(t llm.Tool) *toolDoc {
	key := toolName{t.Name, t.Description}
	c.mu.Lock()
	for _, d := range c.docs[key] {
		if bytes.Equal(d.schema, t.InputSchema) {
			c.mu.Unlock()
			return d
		}
	}
	c.mu.Unlock()
	ws := tokenizeTool(t)
	d := &toolDoc{schema: bytes.Clone(t.InputSchema), tf: make(map[string]int, len(ws)), len: len(ws)}
	for _, w := range ws {
		d.tf[w]++
	}
	c.mu.Lock()
	if c.size >= cacheMax {
		clear(c.docs) // a bound, never reached by one suite
		c.size = 0
	}
	c.docs[key] = append(c.docs[key], d)
	c.size++
	c.mu.Unlock()
	return d
}

func tokenizeTool(t llm.Tool) []string {
	ws := tokens(t.Name)
	ws = append(ws, tokens(t.Description)...)
	for _, p := range properties(t.InputSchema) {
		ws = append(ws, tokens(p.name)...)
		ws = append(ws, tokens(p.schema.Description)...)
	}
	return ws
}

// property is one top-level parameter of an input schema.
type property struct {
	name     string
	schema   propSchema
	required bool
}

type propSchema struct {
	Type        any                   `json:"type"` // a string or a list of strings
	Description string                `json:"description"`
	Enum        []any                 `json:"enum"`
	Format      string                `json:"format"`
	Default     json.RawMessage       `json:"default"`
	Items       *propSchema           `json:"items"`
	Properties  map[string]propSchema `json:"properties"`
}

// typ returns the first non-null type of the schema, "" if none is given.
func (s propSchema) typ() string {
	switch t := s.Type.(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	if len(s.Properties) > 0 {
		return "object"
	}
	return ""
}

// properties lists the top-level parameters of schema sorted by name.
func properties(schema json.RawMessage) []property {
	var s struct {
		Properties map[string]propSchema `json:"properties"`
		Required   []string              `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]property, len(names))
	for i, n := range names {
		out[i] = property{name: n, schema: s.Properties[n], required: req[n]}
	}
	return out
}

var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the of for to in on at by with from and or is are was were be been
		being me my i you your we our us it its this that these those what which who whom how when where why
		do does did can could would should will shall may might must please tell give there their them they
		about into as if so not no yes up out has have had just also than then only use using used return
		returns returned given via etc e g any some each every here s t let lets know want need like`) {
		stopwords[w] = true
	}
}

// tokens splits text into lower-case terms: on anything that is not a
// letter or digit, and at camelCase boundaries; stop words are dropped and
// plurals folded.
func tokens(text string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			w := stem(strings.ToLower(string(cur)))
			if w != "" && !stopwords[w] {
				out = append(out, w)
			}
			cur = cur[:0]
		}
	}
	rs := []rune(text)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// stem folds plurals and a few suffixes: "clients" -> "client",
// "policies" -> "polic", "healthy" -> "health", "connected" -> "connect".
// It is deliberately crude; the same crude rules apply to both sides.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		w = w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		w = w[:len(w)-1]
	}
	switch {
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w = w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		w = w[:len(w)-2]
	case len(w) > 4 && (strings.HasSuffix(w, "y") || strings.HasSuffix(w, "e")):
		w = w[:len(w)-1]
	}
	return w
}

func unique(ws []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

package recorder

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tiktoken-go/tokenizer/codec"

	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/llm"
)

// Tokenizer names the BPE encoding tool definitions are counted in: OpenAI's
// o200k_base, from github.com/tiktoken-go/tokenizer, whose vocabulary is
// compiled into the binary (no download, works offline). Its codec package
// is imported directly: the tokenizer package's Get reaches every
// encoding's constructor, which links all five vocabularies (some 45 MB);
// codec.NewO200kBase links o200k_base's alone. Other providers
// tokenise differently; the count is a like-for-like yardstick between
// servers, not a bill.
const Tokenizer = "o200k_base"

// ToolCost is the size of a tool list as a model receives it.
type ToolCost struct {
	Tools  int `json:"tools"`
	Chars  int `json:"chars"`  // characters of the tools' JSON definitions
	Tokens int `json:"tokens"` // o200k_base tokens of the same text
}

// MeasureTools counts the characters and tokens of tools' definitions
// (name, description, input schema as JSON).
func MeasureTools(tools []llm.Tool) (ToolCost, error) {
	enc := codec.NewO200kBase()
	b, err := json.Marshal(tools)
	if err != nil {
		return ToolCost{}, err
	}
	n, err := enc.Count(string(b))
	if err != nil {
		return ToolCost{}, fmt.Errorf("counting tokens: %w", err)
	}
	return ToolCost{Tools: len(tools), Chars: len([]rune(string(b))), Tokens: n}, nil
}

// CountTokens counts the o200k_base tokens of text; scoring uses it so that
// tool-definition token shares are measured with the recorder's tokenizer.
//
// It is exact, and fast on what bench counts over and over (tool lists,
// tool results, answers, all JSON): text is cut into chunks at points where
// the tokenizer must start a new piece, and each chunk's count is memoized
// by its SHA-256 (hashing is some hundred times cheaper than BPE). A new
// scenario then costs the tokens of its result schema, not of the whole
// tool list again; a changed tool description, those of that tool.
//
// The cut points are the ends of `,{"` followed by an ASCII letter, as
// between the objects of a JSON array ("},{\"name\""). o200k's split pattern
// has no look-behind, its letter and number pieces take at most one leading
// non-letter, and a run of punctuation (` ?[^\s\p{L}\p{N}]+[\r\n/]*`) is
// greedy: the piece holding the comma is such a run, it ends right before
// the letter, and a piece starts there whatever came before. BPE works
// within pieces, so the counts of the chunks add up to the count of the
// text. FuzzCountTokensChunks holds the sum to the one-pass count.
func CountTokens(text []byte) int {
	n := 0
	for len(text) > 0 {
		cut := nextCut(text)
		n += countChunk(text[:cut])
		text = text[cut:]
	}
	return n
}

// minChunk keeps chunks from getting so small that hashing them costs
// more than it saves.
const minChunk = 256

// nextCut is the length of text's first chunk: up to the end of the first
// `,{"` + ASCII letter at or after minChunk, or all of it.
func nextCut(text []byte) int {
	for off := minChunk; off < len(text); {
		i := bytes.Index(text[off:], []byte(`,{"`))
		if i < 0 {
			break
		}
		end := off + i + 3
		if end < len(text) && isASCIILetter(text[end]) {
			return end
		}
		off = off + i + 1
	}
	return len(text)
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// countChunk is countTokens, memoized for chunks worth hashing.
func countChunk(text []byte) int {
	if len(text) < 64 {
		return countTokens(text)
	}
	key := sha256.Sum256(text)
	if n, ok := tokenMemo.Load(key); ok {
		return n.(int)
	}
	n := countTokens(text)
	if tokenMemoSize.Add(1) > tokenMemoMax {
		tokenMemo.Clear() // a bound on memory, not a policy: counts are cheap to redo
		tokenMemoSize.Store(1)
	}
	tokenMemo.Store(key, n)
	return n
}

var (
	tokenMemo     sync.Map // [32]byte -> int
	tokenMemoSize atomic.Int64
)

const tokenMemoMax = 1 << 16

// Warm loads the tokenizer's vocabulary and the fake Central's catalog, for
// a caller to do in the background while it sets up: the first run then
// does not pay for them.
func Warm() {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); fakecentral.Warm() }()
	go func() { defer wg.Done(); codec.NewO200kBase() }()
	wg.Wait()
}

// countTokens counts in one pass, with no memo; 0 if the tokenizer fails
// (its split-pattern matcher fails only past a backtracking limit).
func countTokens(text []byte) int {
	n, err := codec.NewO200kBase().Count(string(text))
	if err != nil {
		return 0
	}
	return n
}

// usageEstimator counts the tokens of the requests and responses of a model
// that reports no usage (the offline baseline, the oracle), with the same
// tokenizer as tool definitions: the tools and the system prompt once per
// run, each message once, summed per turn as a provider would bill them.
type usageEstimator struct {
	fixed int // tool definitions and system prompt
	// The messages counted so far and their counts: a run's requests only
	// grow, so each message is counted once.
	msgs   []llm.Message
	counts []int
}

func newUsageEstimator(system string, tools []byte) *usageEstimator {
	return &usageEstimator{fixed: CountTokens(tools) + CountTokens([]byte(system))}
}

func (e *usageEstimator) estimate(req *llm.Request, resp []byte) (in, out int) {
	in = e.fixed
	n := llm.CommonPrefix(e.msgs, req.Messages)
	e.msgs, e.counts = e.msgs[:n], e.counts[:n]
	for i := range req.Messages {
		if i >= n {
			b, _ := json.Marshal(&req.Messages[i])
			e.msgs = append(e.msgs, req.Messages[i])
			e.counts = append(e.counts, CountTokens(b))
		}
		in += e.counts[i]
	}
	return in, CountTokens(resp)
}

package recorder

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/mcpbench/bench/internal/memo"
	"github.com/mcpbench/bench/internal/o200k"
	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/traces"
)

// Tokenizer names the BPE encoding tool definitions are counted in: OpenAI's
// o200k_base, counted by package internal/o200k exactly as
// github.com/tiktoken-go/tokenizer counts it, with its vocabulary embedded
// in the binary (no download, works offline) in a form the garbage
// collector does not scan. Other providers tokenise differently; the count
// is a like-for-like yardstick between servers, not a bill.
const Tokenizer = o200k.Name

// ToolCost is the size of a tool list as a model receives it.
type ToolCost struct {
	Tools  int `json:"tools"`
	Chars  int `json:"chars"`  // characters of the tools' JSON definitions
	Tokens int `json:"tokens"` // o200k_base tokens of the same text
}

// TokenCounter counts o200k_base tokens. It is safe for concurrent use;
// it keeps a memo of the counts of what it has seen, so one belongs to
// each long-lived user: a Recorder has one, a scorer another.
type TokenCounter struct {
	memo memo.Bytes[int] // a chunk's count by its SHA-256
}

// NewTokenCounter returns a TokenCounter.
func NewTokenCounter() *TokenCounter {
	return &TokenCounter{memo: memo.Bytes[int]{Max: tokenMemoMax}}
}

// MeasureTools counts the characters and tokens of tools' definitions
// (name, description, input schema as JSON).
func (t *TokenCounter) MeasureTools(tools []llm.Tool) (ToolCost, error) {
	b, err := json.Marshal(tools)
	if err != nil {
		return ToolCost{}, err
	}
	n, err := o200k.Count(string(b))
	if err != nil {
		return ToolCost{}, fmt.Errorf("counting tokens: %w", err)
	}
	return ToolCost{Tools: len(tools), Chars: len([]rune(string(b))), Tokens: n}, nil
}

// Count counts the o200k_base tokens of text; scoring uses it so that
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
func (t *TokenCounter) Count(text []byte) int {
	n := 0
	for len(text) > 0 {
		cut := nextCut(text)
		n += t.countChunk(text[:cut])
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

// countChunk is countOnce, memoized for chunks worth hashing.
func (t *TokenCounter) countChunk(text []byte) int {
	if len(text) < 64 {
		return t.countOnce(text)
	}
	// Keyed by its SHA-256: the memo keeps 32 bytes of a chunk, not the
	// chunk (at most tokenMemoMax of them; counts are cheap to redo).
	key := sha256.Sum256(text)
	return t.memo.Get(key[:], func([]byte) int { return t.countOnce(text) })
}

const tokenMemoMax = 1 << 16

// countOnce counts in one pass, with no memo; 0 if the tokenizer fails
// (only with a damaged embedded vocabulary).
func (t *TokenCounter) countOnce(text []byte) int {
	n, err := o200k.Count(string(text))
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
	tc    *TokenCounter
	fixed int // tool definitions and system prompt
	// The messages counted so far and their counts: a run's requests only
	// grow, so each message is counted once.
	msgs   []llm.Message
	counts []int
}

func newUsageEstimator(tc *TokenCounter, system string, tools []byte) *usageEstimator {
	return &usageEstimator{tc: tc, fixed: tc.Count(tools) + tc.Count([]byte(system))}
}

func (e *usageEstimator) estimate(req *llm.Request, resp []byte) (in, out int) {
	in = e.fixed
	n := llm.CommonPrefix(e.msgs, req.Messages)
	e.msgs, e.counts = e.msgs[:n], e.counts[:n]
	for i := range req.Messages {
		if i >= n {
			b, _ := json.Marshal(&req.Messages[i])
			e.msgs = append(e.msgs, req.Messages[i])
			e.counts = append(e.counts, e.tc.Count(b))
		}
		in += e.counts[i]
	}
	return in, e.tc.Count(resp)
}

// laterUsage estimates a run's turns' usage beside the loop, in turn order
// (the estimator counts each message once, on the turns before): counting
// a request is not on the run's path, which goes on to the turn's tool
// calls while its request is counted (a recording with the offline
// baseline spent a third of its path counting). The turns' usage is filled
// in by the time wait returns.
type laterUsage struct {
	jobs chan usageJob
	done chan struct{}
}

type usageJob struct {
	turn *traces.Turn
	req  *llm.Request // not changed after it was sent
	resp []byte
}

// newLaterUsage starts estimating with a new usageEstimator(tc, system,
// tools) for a run of at most turns turns.
func newLaterUsage(tc *TokenCounter, system string, tools []byte, turns int) *laterUsage {
	l := &laterUsage{jobs: make(chan usageJob, turns), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		est := newUsageEstimator(tc, system, tools)
		for j := range l.jobs {
			j.turn.Usage.Input, j.turn.Usage.Output = est.estimate(j.req, j.resp)
		}
	}()
	return l
}

// add has turn's usage estimated from its request and response; turn is
// not read or written by anyone else until wait returns.
func (l *laterUsage) add(turn *traces.Turn, req *llm.Request, resp []byte) {
	l.jobs <- usageJob{turn, req, resp}
}

// wait returns once every turn added has its usage.
func (l *laterUsage) wait() {
	close(l.jobs)
	<-l.done
}

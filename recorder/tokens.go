package recorder

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tiktoken-go/tokenizer"

	"github.com/mcpbench/bench/llm"
)

// Tokenizer names the BPE encoding tool definitions are counted in: OpenAI's
// o200k_base, from github.com/tiktoken-go/tokenizer, whose vocabulary is
// embedded in the binary (no download, works offline). Other providers
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
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return ToolCost{}, fmt.Errorf("loading tokenizer %s: %w", Tokenizer, err)
	}
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
// It returns 0 if the embedded vocabulary cannot be loaded (it always can).
//
// Counts are memoized by the SHA-256 of the text (hashing is some hundred
// times cheaper than BPE): runs of one server repeat the same tool
// definitions, tool results and answers over and over.
func CountTokens(text []byte) int {
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

func countTokens(text []byte) int {
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return 0
	}
	n, err := enc.Count(string(text))
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
}

func newUsageEstimator(system string, tools []byte) *usageEstimator {
	return &usageEstimator{fixed: CountTokens(tools) + CountTokens([]byte(system))}
}

func (e *usageEstimator) estimate(req *llm.Request, resp []byte) (in, out int) {
	in = e.fixed
	for _, m := range req.Messages {
		b, _ := json.Marshal(m)
		in += CountTokens(b)
	}
	return in, CountTokens(resp)
}

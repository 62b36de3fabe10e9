// Package llm is bench's provider-neutral view of a chat model that calls
// tools.
//
// Vocabulary:
//
//   - A [Request] is everything a model sees on one turn: the system prompt,
//     the conversation so far ([Message]s, including the tool calls the model
//     made and the tool results the harness fed back), the [Tool] definitions
//     on offer, the [ToolChoice] and the [Sampling] parameters.
//   - A [Response] is what the model answered on that turn: text, zero or
//     more [ToolCall]s, a normalised [StopReason] and [Usage].
//   - A [Model] turns a Request into a Response. Its Name is stable and is
//     what reports print: "openai:MODEL", "anthropic:MODEL", "baseline-bm25",
//     "oracle".
//   - A [Spec] is the command-line spelling of a model ("openai:gpt-4.1",
//     "anthropic:claude-sonnet-4-5", "baseline", "oracle"); [ParseSpec]
//     checks it.
//
// The live providers live in subpackages that wrap the official SDKs
// (llm/openai, llm/anthropic); no SDK type crosses their API. The offline
// lexical model is llm/baseline. The [Oracle] lives here because it is a few
// lines and needs nothing.
//
// # Request encoding
//
// A Request encodes to JSON deterministically: struct fields in declaration
// order, slices in order, no Go map is ever iterated into the output. How a
// trace stores a request, and the request key replay matches turns on, are
// defined in package llm/reqkey.
//
// The non-live models (baseline, oracle) mint deterministic tool-call ids
// themselves, so their requests are byte-stable run after run.
//
// # Usage accounting
//
// [Usage.InputTokens] counts every prompt token, cached or not (OpenAI's
// convention). Anthropic reports input_tokens excluding cache reads and cache
// writes; the anthropic package adds them back so providers compare like for
// like. [Usage.CachedTokens] is the part of InputTokens served from a cache,
// [Usage.CacheWriteTokens] the part written to one (Anthropic only).
//
// # Retries
//
// SDK retries are switched off. The live providers retry with a bounded
// [RetryPolicy] of bench's own (408, 409, 429 and 5xx, and a request past
// the policy's AttemptTimeout; exponential backoff; Retry-After and
// retry-after-ms honoured) and report every failed attempt, in
// [Response.Retries] or, when the call finally fails, through [RetriesOf],
// so the recorder can store them as events. API keys never appear in an
// error: providers pass every message through [Redact].
package llm

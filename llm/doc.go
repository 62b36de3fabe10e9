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
// order, slices in order, no Go map is ever iterated into the output.
// [Request.Canonical] additionally applies the normalisation rules below so
// that two requests a live run would consider the same produce the same
// bytes; the recorder canonicalises those bytes once more (RFC 8785 style)
// and hashes them into the request key.
//
// Normalisation rules (version [EncodingVersion]):
//
//  1. Tool-call ids are volatile (providers mint random ones such as
//     "call_8fK2..." or "toolu_01..."). They are renamed "call_1", "call_2",
//     ... in order of first appearance, walking messages in order and, within
//     an assistant message, its tool calls in order; tool-result messages
//     are renamed through the same table. An id seen only in a tool result
//     gets the next number too.
//  2. Embedded JSON (tool arguments, input schemas) is re-encoded compactly
//     with object keys sorted and numbers kept as written.
//  3. Text (system prompt, message content, descriptions) is kept byte for
//     byte: the fake Central has a fixed clock and seeded ids, so tool
//     results are already stable.
//
// The non-live models (baseline, oracle) mint deterministic tool-call ids
// themselves, so their traces are byte-stable even before normalisation.
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
// [RetryPolicy] of bench's own (408, 429 and 5xx; exponential backoff;
// Retry-After honoured) and report every failed attempt, in
// [Response.Retries] or, when the call finally fails, through [RetriesOf],
// so the recorder can store them as events. API keys never appear in an
// error: providers pass every message through [Redact].
package llm

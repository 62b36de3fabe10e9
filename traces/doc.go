// Package traces holds bench's trace model and its content-addressed store.
//
// # Vocabulary
//
// A run is one execution of one scenario against one server by one model
// with fixed sampling parameters, seed and run index. A [Run] is its manifest
// ([Manifest]) and its ordered [Event]s: the MCP handshake, the tool list,
// every model turn, every tool call, every HTTP call the fake Central
// journaled, the final answer and any error.
//
// A payload is a JSON value. Every payload is reduced to canonical JSON (see
// below) and identified by the SHA-256 of those canonical bytes: its [ID].
// Hashing happens before compression, so an ID names content, not a storage
// layout, and every read re-hashes what it returns.
//
// A run's ID is the ID of its whole canonical document (its manifest and
// events; the start time and the servers' stderr are kept beside it). The
// store keeps each run as one zstd frame compressed against a base: the
// first run stored of its family (same server, model and scenario), whose
// own base is one of the anchors of its server and model (see codec.go).
// Reading a run decompresses it against its base and re-hashes the
// document, so a run's identity does not depend on how it is stored.
//
// A ref is a named pointer to a run, like a git ref:
// <suite>/<server>/<model>/<scenario>/<run-index>. Refs are the roots of the
// store: [Store.GC] drops whatever no ref reaches.
//
// A pack is one file holding runs and refs, to move traces
// between machines (CI artifacts, sharded recordings). Packs are
// deterministic: the same runs give the same bytes on any machine.
//
// # Canonical JSON
//
// Canonical JSON follows RFC 8785 (JSON Canonicalization Scheme), with one
// deliberate difference for integers:
//
//   - No insignificant whitespace.
//   - Object members are sorted by their keys compared as UTF-16 code units
//     (RFC 8785 §3.2.3). Duplicate keys are an error.
//   - Strings are written with the shortest escapes: \" \\ \b \f \n \r \t,
//     other control characters as \u00xx (lower-case hex), and everything
//     else as literal UTF-8, including non-ASCII, '<', '>' and '&'. Escapes in
//     the input (\u00e9, surrogate pairs) are decoded first, so two spellings
//     of one string canonicalise alike. Invalid UTF-8 and lone surrogates are
//     an error: a payload that cannot round-trip is refused, not mangled.
//   - Integers (no fraction, no exponent) that fit in 64 bits are written as
//     their exact decimal digits ("-0" becomes "0"); this is where bench
//     differs from RFC 8785, which would round integers above 2^53 through a
//     double. All other numbers are parsed as IEEE 754 doubles and written as
//     ECMAScript's Number.prototype.toString does (RFC 8785 §3.2.2.3):
//     1.5, 1e+21, 1e-7. NaN and infinities cannot occur in JSON.
//   - true, false and null are written as such.
//
// The rules are tested in canonical_test.go and fuzzed by FuzzCanonical.
//
// The canonical JSON of a Go value (a run's document) is [Marshal]'s:
// encoding/json's encoding (names from json tags, invalid UTF-8 as U+FFFD),
// canonicalised. The store writes it directly (encode.go): per type, once,
// it builds an encoder by reflection that writes the fields in canonical
// order and each payload canonicalised once, so a field added to a trace
// type needs no code. FuzzCanonicalEncoder holds it to Marshal, and
// decodeCanonical, which reads documents back, to encoding/json.
//
// # Durability
//
// [Store.PutRun] writes a run's record, any base it becomes and its refs in one synced
// pebble batch: a process killed mid-write leaves either the whole run or
// nothing. Only one process may open a store at a time.
package traces

// Package replayer serves the model turns of a recorded run again, so a
// pull request's MCP server can be exercised live, offline and without a
// model, and explains every turn it cannot serve.
//
// # Vocabulary
//
//   - A [Model] is an llm.Model backed by one recorded traces.Run. The
//     recorder's agent loop drives it exactly as it drives a live model: at
//     turn i the loop builds the request a live run would send (the pull
//     request's tool definitions, the pull request's tool results) and
//     calls Generate; the Model computes the request's key (llm/reqkey) in
//     the recorded run's scope, as the recording computed its own.
//   - A hit: the key equals recorded turn i's key. The recorded response is
//     served with its recorded usage; its recorded latency is carried as
//     data (the [Clock] jumps by it), never waited for.
//   - A miss: the keys differ. A [Miss] explains the difference component by
//     component ([Difference]): tool definitions added, removed or changed
//     (a word diff of the description, a JSON-path diff of the schema), the
//     first message that differs (a JSON-path diff of a tool result that
//     changed, a word diff of text), the sampling parameters, the tool
//     choice and the system prompt. A request the recording never reached
//     (the live run goes on after the recorded run ended) is a miss too.
//   - The [Mode] decides what a miss does: [Strict] stops the run with
//     outcome "stale" (the loop sees an error with an Outcome method);
//     [Lenient] serves recorded turn i anyway and marks the run diverged at
//     its first miss; [Live] asks a configured live model from the first
//     miss on, recording a new episode.
//   - The [Clock] is the time source of a replay. Model time is the recorded
//     latency; server and fake time is measured on the wall clock only
//     while tools run (between a served response and the next request), at
//     a resolution (default 500 ms) that makes two replays of the same
//     store give the same numbers, so reports are byte-identical. Server
//     start-up and harness time are not counted.
//
// The package launches nothing and imports no other bench package than
// traces and llm: cmd/bench wires it into recorder.Job.
package replayer

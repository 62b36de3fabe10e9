package main

// The long help of the two commands that run batches, kept apart from the
// code that moves their flags into options (record.go, replay.go): docs/cli.md
// is generated from it (UPDATE_CLI_DOC=1 go test ./cmd/bench -run
// TestCLIReference).

const recordLong = `record runs each selected scenario --runs times against the server a profile
describes, each run with a fresh fake Central (the scenario's fixture and
faults) and the model --model names, and stores every run in the trace store
under <suite>/<server>/<model>/<scenario>/<run-index>.

While a run runs, the server the next run needs starts in the background,
so a server's start-up (seconds for many Python servers) overlaps the run
before; the requests it makes while it starts are journaled at the start
of its run. --reuse-server keeps one server per fixture instead, restarted
only when it is at fault (it exited, its session broke, a call or the run
timed out), not after a model's error. With one run at a time (no
--parallel), each such server then runs its fixture's runs one after the
other, as bench replay --reuse-server does, and the next fixture's server
starts while the runs before end. A server started in the background that
failed its start, or exited before its run, is not used: the run starts
another, and bench says on stderr how many, how long a run waited for one
(up to the profile's start_timeout) and why the first failed.

A dynamically linked server (Python, Node) starts with its clock stopped at
the fixture's time when libfaketime is installed; bench says so once, or
says why it could not. The profile's normalize rules replace what cannot be
pinned (the time a Go server prints) before runs are hashed (docs/clock.md).

Runs already stored are skipped, so an interrupted recording resumes where
it stopped (a run's line is printed once the run is on disk: a recording
killed at any point has kept every run it printed); a stored run that ended in an error is recorded again, and so
is one recorded from another definition of its scenario (its manifest
changed since, or another manifest has the same id); the summary counts
those ("N recorded again"). --force records the runs
that are stored and good again too. A stored run that cannot be read is
damage, not a run recorded: record stops before it runs anything and says
to run bench traces repair, after which the same command records what the
repair dropped. --shard i/n records the i-th of n
deterministic slices of the run list (1 <= i <= n), for several CI
machines; merge their stores with bench traces export/import.

Before the first run, record checks what it can: the model's key is set
(OPENAI_API_KEY for openai: with the default base URL; ANTHROPIC_API_KEY or
ANTHROPIC_AUTH_TOKEN for anthropic: with the default base URL), and the
server starts, answers the MCP handshake and lists its tools (that start
serves the first run). Either failing exits 4 with nothing stored.

A run that fails because of the server (it crashes, hangs, breaks the
session or answers too much mid-run) or whose request the provider refused
(HTTP 400 and the like) is a result: it is stored with its error and
counted in the summary. A run that says nothing about the server is
reported and not stored, so that a rerun records it, and bench exits 4:
the server did not start; no model answered (the provider could not be
reached, or refused the key or the model: HTTP 401, 403, 404), which also
stops the recording; the provider failed transiently (HTTP 408, 409, 429
or 5xx past bench's retries, a request past --request-timeout on every
attempt, a connection broken mid-answer).

A live model is sent --max-tokens as the limit of each turn's output
(default 1024: a turn is a few tool calls or submit_result, and the
largest reference result of the golden suite is under 900 bytes, so 1024
leaves room while a model that loops in its output is stopped at it; a
reasoning model spends its reasoning from it and needs more; 0 leaves the
provider's default, and anthropic:, whose API needs one, is sent 4096). It
is in every request and the manifest, so a replay sends the same. Each
HTTP request to the provider is bounded by --request-timeout (default 5m:
a small local model on 2 CPU cores takes up to 3 minutes on a cold first
turn); a request past it is retried, as a 429 or 5xx is (4 attempts, the
provider's Retry-After or retry-after-ms honoured), and each retried
attempt is kept with its turn (bench traces show).

What the model does wrong is a result about it and the server, never
bench's error: a call that names no tool, whose arguments are not a JSON
object, or of a tool the server does not have is answered with an error
and the run goes on (invalid calls, counted as malformed and unknown-tool
calls); prose instead of submit_result ends the run with outcome text; the
same call (tool and arguments) 3 times in a row ends it with outcome loop,
the third not run; a last turn cut by --max-tokens ends it with outcome
max_tokens (docs/methodology.md).

Models: openai:MODEL (OPENAI_API_KEY, OPENAI_BASE_URL), anthropic:MODEL
(ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL), baseline
(offline, lexical), oracle (follows the scenario's expected tools and
parameters for this server, then submits its reference result).

` + serverEnvHelp

const replayLong = `replay serves the recorded model turns of every stored run under --from
(default golden/<server>/) whose scenario is in the selection, while the
server the profile describes runs live against a fresh fake Central, exactly
as in a recording. No model, no key and no network are needed.

At each turn the request the live run builds is compared with the recorded
one by its key. Equal: the recorded response is served, with its recorded
usage and latency (as data; replay never waits). Different: a miss,
explained by component (tool definitions added, removed or changed, with a
word diff of the description and a JSON-path diff of the schema; the
message that differs, with a JSON-path diff of the tool result; sampling;
system prompt) and handled by --mode: strict stops the run (outcome stale),
lenient serves the recorded turn anyway (outcome diverged), live asks
--live-model from the miss on. Tool results are compared as the profile's
normalize rules rewrite them, and a dynamically linked server runs with its
clock stopped at the fixture's time, as in the recording (docs/clock.md).
A recorded run that ended in an error replays to where it ended and stops
there with that error: a recorded error, counted apart ("recorded errors:
N"), neither stale nor scored.

Stale runs, recorded errors and the baseline's runs that ended in an error
are left out of both sides of the comparison, run index by run index, and
counted ("left out of both sides: N run(s)"); a replay that fails where its
recording did not stays in: that is the server's failure.

The replay runs are stored under replay/<recorded ref>, scored, compared
with the baseline (default: the recorded runs themselves; or a ref prefix,
or a REPORT.json) and gated by --stage's gate (the built-in stages, with
--config or ./bench.yaml read over them; without --stage, the default
gate).
Reports go to stdout (text) and, with --report-dir, to REPORT.txt,
REPORT.json, REPORT.md and REPORT.xml (JUnit) in that directory, as
--format lists them: each written whole and renamed into place, so a
symlink planted at a report's name is replaced, not followed. Replay runs are stored under replay/<recorded ref>;
the latest replay of a recorded run holds the ref.

Latency in a replay is scored as in a recording: the recorded model time
plus each tool call's wall time rounded down to 500ms (docs/methodology.md),
so an unchanged server shows no latency change and a server that got a
second slower does. --latency-resolution is the step at which the replay's
clock (event times, and the time the fake Central sees) counts live time; 0
counts recorded model time only.

The server a run needs starts in the background while the run before it
replays (with --reuse-server, each fixture's server while the previous
fixture's runs replay), so start-up does not add to the replay's time; one
that failed its start, or exited before its run, is not used (the run
starts another, and bench says so on stderr, as record does). A reused
server is restarted only when it is at fault (it exited, its session
broke, a call or the run timed out), not after a miss.
Without --reuse-server, a replay runs its servers as its runs were
recorded (bench record --reuse-server or not; the first run's manifest
says, and a run recorded before it did reads as fresh): a reused server
fetches its token once, a fresh one at every run, and api_call_count
counts each fetch. A report warns of runs recorded with a reused server
and replayed with fresh ones.

--parallel N replays N runs at once, each with its own server and fake
Central; the reports are the same as with one at a time (results are
collected in ref order). Parallel runs share the CPU, so a tool call that
takes close to a multiple of 500ms may count differently: keep the default
of 1 where latency is gated and the machine is small.

Exit codes: 0 pass, 1 regression past a threshold, 2 bad input, 3 safety
failure, 4 setup failure (the server or the fake did not start), 5
inconclusive (more stale runs than the gate allows).

` + serverEnvHelp

// Package recorder runs an MCP server under test against a fresh fake
// Central, drives it with a model through bench's agent loop, and captures
// everything that happens into a traces.Run.
//
// # Vocabulary
//
//   - A profile ([Profile], servers/*.yaml, or one entry of the "mcpServers"
//     JSON that MCP clients use) says how to launch a server: its argv, its
//     working directory, its templated environment, its transport (stdio or
//     streamable HTTP), how to tell it is ready, how long it may take to
//     start, the variables that open its write gate, and an adapter (tool
//     renames, published with the profile).
//   - Template variables in a profile's command, env, url and ready fields:
//     {central_url} {token_url} {proxy_url} {ca_file} {port} {writes}.
//     {port} is a free loopback port picked per launch; {writes} is "1" when
//     the scenario's write gate is write or destructive, else "0".
//   - A job ([Job]) is one run to execute: a scenario, a profile, a model,
//     its sampling parameters and seed, and a run index.
//   - The agent loop ([Loop]) is the client side of a run: a versioned system
//     prompt ([SystemPrompt], hash in the manifest), the scenario's intent as
//     the user message, the server's tools (after the adapter) plus the
//     harness tool llm.SubmitTool whose input schema is the scenario's
//     result schema. It loops until submit_result is called with a valid
//     result, the model answers in text, or the turn budget runs out. A call
//     to an unknown tool, or with arguments that fail the tool's input
//     schema, is recorded as invalid and returned to the model as an error.
//   - The request key of a turn (package llm/reqkey, defined in
//     docs/architecture.md) hashes the request with the recorded model's
//     provider and name, the scenario id and the run index. Replay matches
//     on it.
//   - Attribution: the recorder marks the tool call in flight in the fake
//     Central (BeginToolCall); every request the fake journals carries that
//     index, and requests before the first tool call are boot calls.
//
// # Profile format (servers/*.yaml, format 1)
//
//	format: 1                     # optional; other versions are refused
//	name: reference               # the server's name in refs and reports
//	repo: local                   # or owner/name
//	sha: ""                       # pinned commit of a compared server
//	transport: stdio              # stdio (default) | http
//	command: [go, run, ./examples/central-mcp]   # argv, never a shell string
//	cwd: .                        # relative to the repository root for a profile in servers/,
//	                              # else to the profile's directory
//	env: {CENTRAL_BASE_URL: "{central_url}", HTTPS_PROXY: "{proxy_url}", SSL_CERT_FILE: "{ca_file}"}
//	pass_env: [PYTHONPATH]        # more of the caller's variables the server inherits
//	url: http://127.0.0.1:{port}/mcp      # http transport
//	ready: http://127.0.0.1:{port}/readyz # http: 2xx means ready (default: the url answers at all)
//	start_timeout: 60s            # launch + handshake + tools/list
//	protocol_version: 2025-11-25  # the MCP version asked for
//	writes_env: {CENTRAL_WRITES: "1"}     # added when write_gate is write or destructive
//	adapter: {rename: {server_tool: model_tool}}
//	adapter:                      # or: routes to inner tools not in the tool list
//	  routes: [{tool: invoke_tool, name: name, arguments: arguments}]  # a router, or
//	          # {tool: execute, code: code, call: "return await call_tool({name}, {arguments})", language: python}
//	inner_tools: tools/x.json     # the inner tools' list (servers check --save-tools): which are read-only
//	variant_of: x                 # another exposure of server x: the scenarios' expectations for x apply
//
// Unknown fields and unknown {variables} are errors. A JSON file in the
// "mcpServers" format ({"mcpServers": {"NAME": {"command", "args", "env",
// "cwd", "type", "url"}}}, or VS Code's "servers") is read too; PATH#NAME
// picks an entry, and the bench fields (ready, start_timeout, writes_env,
// adapter, pass_env) may be added to an entry. Every server also gets the
// fake Central's environment (fakecentral.Server.Env: proxy, CA bundle,
// FAKECENTRAL_*), after the caller's allowed variables ([ChildEnv]) and
// before the profile's env.
//
// # Replay
//
// The replayer drives the same loop with its own llm.Model: it builds a
// Job with the recorded run's ModelRef, Sampling and RunIndex, Mode
// traces.ModeReplay and Replays set, and calls Recorder.Run. Every request
// reaches its Model exactly as a live run would build it; the Model keys it
// as the loop does (llm/reqkey) and serves the recorded turn whose key it
// has. A Model error that has an
// Outcome() traces.Outcome method ends the run with that outcome ("stale"); the
// caller may set Manifest.Outcome ("diverged") before storing the run.
//
// # Processes
//
// A server runs as a child in its own process group. Stopping it closes its
// stdin, waits a grace period, then signals the whole group (SIGTERM, then
// SIGKILL), so nothing it started survives: on success, on failure, on a
// timeout and on cancellation (Ctrl-C cancels the context). Its stderr is
// kept, bounded to its tail, in the trace.
//
// # Secrets
//
// A server inherits an allowlist of the caller's environment ([ChildEnv]:
// [BaseEnv], and the variables Options.PassEnv and the profile's pass_env
// name), so no credential of the caller's shell reaches it, whatever its
// name. Model API keys never reach a trace: every string in a run is
// scrubbed of Options.Secrets before the run is hashed, and HTTP between
// bench and a streamable HTTP server is captured with Authorization and
// API-key headers redacted. The values of the caller's environment that
// the server was not given and wrote anyway (a .env file, its parent's
// environment) are replaced by [redacted:NAME] wherever they reach the run
// ([RedactedPlaceholder]; runs in which the server wrote none are not
// changed).
package recorder

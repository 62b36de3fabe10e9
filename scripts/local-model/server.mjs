// bench's local model server: a GGUF model under node-llama-cpp's prebuilt
// llama.cpp, served on loopback as an OpenAI-compatible chat-completions
// endpoint (POST /v1/chat/completions) and an Anthropic-compatible
// messages endpoint (POST /v1/messages), both with tool calling, whole
// answers only (no streaming). One request is evaluated at a time, on one
// context sequence, so the prompt prefix a request shares with the one
// before (system prompt and tool definitions, earlier turns) is not
// evaluated again: the prefix cache holds across turns and runs.
//
//   node server.mjs --model FILE --model-id ID [--port 0] [--threads N]
//                   [--ctx 8192] [--repair tagless-json|none]
//                   [--state-dir DIR --model-sha256 HEX]
//
// With --state-dir, the evaluated state of a prompt whose prefix was not
// cached is saved there (keyed by the model's sha256 and the prompt's
// tokens), and a server that starts cold loads the saved state that shares
// the longest prefix with its first prompt: the system prompt and tool
// definitions of a server are evaluated once per machine, not once per
// start.
//
// It prints "listening on http://127.0.0.1:PORT" once the model is loaded.

import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { getLlama, LlamaCompletion, LlamaLogLevel } from "node-llama-cpp";
import {
  REPAIR_POLICIES,
  RequestError,
  anthropicError,
  fromAnthropic,
  fromOpenAI,
  openAIError,
  parseOutput,
  render,
  toAnthropic,
  toOpenAI,
} from "./chat.mjs";

const { values: opt } = parseArgs({
  options: {
    model: { type: "string" },
    "model-id": { type: "string" },
    host: { type: "string", default: "127.0.0.1" },
    port: { type: "string", default: "0" },
    threads: { type: "string", default: "0" },
    ctx: { type: "string", default: "8192" },
    repair: { type: "string", default: "tagless-json" },
    "default-max-tokens": { type: "string", default: "1024" },
    "state-dir": { type: "string" },
    "model-sha256": { type: "string" },
  },
});
if (!opt.model || !opt["model-id"]) {
  console.error("usage: node server.mjs --model FILE --model-id ID [--port N] [--threads N] [--ctx N] [--repair POLICY]");
  process.exit(2);
}
if (!REPAIR_POLICIES.includes(opt.repair)) {
  console.error(`--repair ${opt.repair}: want one of ${REPAIR_POLICIES.join(", ")}`);
  process.exit(2);
}
if (!["127.0.0.1", "::1", "localhost"].includes(opt.host)) {
  console.error(`--host ${opt.host}: this server listens on loopback only`);
  process.exit(2);
}

// threadsFor picks the evaluation threads: every core, but one fewer when
// the machine is already loaded to its cores (llama.cpp's threads wait on
// each other at every step, so one preempted thread stalls them all).
function threadsFor(requested) {
  const n = Number.parseInt(requested, 10);
  if (n > 0) return n;
  const cores = os.availableParallelism();
  return os.loadavg()[0] >= cores ? Math.max(1, cores - 1) : cores;
}

const threads = threadsFor(opt.threads);
const modelID = opt["model-id"];
const defaultMaxTokens = Number.parseInt(opt["default-max-tokens"], 10);
const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error, progressLogs: false });
const t0 = Date.now();
const model = await llama.loadModel({ modelPath: opt.model });
const context = await model.createContext({ contextSize: Number.parseInt(opt.ctx, 10), sequences: 1, threads });
const sequence = context.getSequence();
const completion = new LlamaCompletion({ contextSequence: sequence });
const template = model.fileInfo.metadata?.tokenizer?.chat_template;
if (!template) {
  console.error(`${opt.model}: the GGUF has no tokenizer.chat_template`);
  process.exit(1);
}
const special = { bos: model.tokens.bosString ?? "", eos: model.tokens.eosString ?? "" };
console.error(`loaded ${opt.model} in ${Date.now() - t0} ms; threads ${threads}; context ${context.contextSize}; repair ${opt.repair}`);

// One generation at a time: requests queue on this promise.
let queue = Promise.resolve();

// The prefix state cache on disk (--state-dir): STATE.bin beside STATE.json
// (the tokens it holds). Only states of this model file are ever read.
const stateDir = opt["state-dir"] && opt["model-sha256"] ? path.join(opt["state-dir"], opt["model-sha256"].slice(0, 16)) : null;
const minShared = 256; // tokens a saved state must share with a prompt to be worth loading
const keepStates = 8;
let triedState = false;

function commonPrefix(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

async function loadState(tokens) {
  if (!stateDir || triedState || sequence.nextTokenIndex > 0) return;
  triedState = true;
  let best = null;
  for (const f of fs.existsSync(stateDir) ? fs.readdirSync(stateDir) : []) {
    if (!f.endsWith(".json")) continue;
    try {
      const saved = JSON.parse(fs.readFileSync(path.join(stateDir, f), "utf8"));
      const n = commonPrefix(saved.tokens, tokens);
      if (n >= minShared && n > (best?.n ?? 0)) best = { n, file: path.join(stateDir, f.replace(/\.json$/, ".bin")) };
    } catch {
      // a state being written, or damaged: not used
    }
  }
  if (!best) return;
  const t = Date.now();
  try {
    await sequence.loadStateFromFile(best.file, { acceptRisk: true });
    console.error(`loaded a saved prefix state (${best.n} tokens shared) in ${Date.now() - t} ms`);
  } catch (e) {
    console.error(`could not load ${best.file}: ${e?.message ?? e}`);
    await sequence.clearHistory();
  }
}

async function saveState() {
  if (!stateDir) return;
  const tokens = sequence.contextTokens.slice();
  const key = createHash("sha256").update(JSON.stringify(tokens)).digest("hex").slice(0, 24);
  fs.mkdirSync(stateDir, { recursive: true });
  const bin = path.join(stateDir, key + ".bin");
  await sequence.saveStateToFile(bin + ".tmp");
  fs.renameSync(bin + ".tmp", bin);
  fs.writeFileSync(path.join(stateDir, key + ".json.tmp"), JSON.stringify({ tokens }));
  fs.renameSync(path.join(stateDir, key + ".json.tmp"), path.join(stateDir, key + ".json"));
  // Keep the newest few.
  const all = fs
    .readdirSync(stateDir)
    .filter((f) => f.endsWith(".bin"))
    .map((f) => ({ f, m: fs.statSync(path.join(stateDir, f)).mtimeMs }))
    .sort((a, b) => b.m - a.m);
  for (const { f } of all.slice(keepStates)) {
    fs.rmSync(path.join(stateDir, f), { force: true });
    fs.rmSync(path.join(stateDir, f.replace(/\.bin$/, ".json")), { force: true });
  }
}

async function generate(req, signal) {
  const prompt = render(template, req, special);
  const tokens = model.tokenize(prompt, true);
  if (tokens.length >= context.contextSize) {
    throw new RequestError(`the prompt is ${tokens.length} tokens; the context holds ${context.contextSize} (--ctx)`);
  }
  await loadState(tokens);
  const { firstDifferentIndex } = sequence.compareContextTokens(tokens);
  const s = req.sampling;
  const maxTokens = Math.min(s.maxTokens ?? defaultMaxTokens, context.contextSize - tokens.length);
  let completionTokens = 0;
  const res = await completion.generateCompletionWithMeta(tokens, {
    maxTokens,
    temperature: s.temperature ?? 0,
    topP: s.topP ?? undefined,
    seed: s.seed ?? undefined,
    customStopTriggers: ["<|im_end|>", "<|endoftext|>"],
    signal,
    stopOnAbortSignal: false,
    onToken: (t) => (completionTokens += t.length),
  });
  const cached = Math.min(firstDifferentIndex, tokens.length - 1);
  if (stateDir && tokens.length - cached >= minShared * 4) {
    // Most of the prompt was evaluated afresh: keep it for the next start.
    await saveState().catch((e) => console.error(`could not save the prefix state: ${e?.message ?? e}`));
  }
  return {
    prompt,
    text: res.response,
    promptTokens: tokens.length,
    cachedTokens: cached,
    completionTokens,
    stop: res.metadata.stopReason === "maxTokens" ? "max_tokens" : "stop",
  };
}

function send(res, status, body, headers = {}) {
  const data = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data), ...headers });
  res.end(data);
}

function readBody(req, limit = 16 << 20) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let n = 0;
    req.on("data", (c) => {
      n += c.length;
      if (n > limit) {
        reject(new RequestError(`the request body is over ${limit} bytes`, 413));
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

const info = {
  id: modelID,
  object: "model",
  created: 0,
  owned_by: "local",
  file: opt.model.split("/").pop(),
  repair: opt.repair,
  threads,
  context: context.contextSize,
};

const server = http.createServer(async (req, res) => {
  const anthropic = req.url === "/v1/messages";
  const fail = (status, message) => send(res, status, anthropic ? anthropicError(status, message) : openAIError(status, message));
  try {
    if (req.method === "GET" && req.url === "/health") return send(res, 200, { status: "ok", model: modelID });
    if (req.method === "GET" && req.url === "/v1/models") return send(res, 200, { object: "list", data: [info] });
    if (req.method !== "POST" || (req.url !== "/v1/chat/completions" && !anthropic)) return fail(404, `no route ${req.method} ${req.url}`);
    let body;
    try {
      body = JSON.parse(await readBody(req));
    } catch (e) {
      if (e instanceof RequestError) throw e;
      throw new RequestError("the body is not JSON");
    }
    if (body.model !== modelID) return fail(404, `model ${JSON.stringify(body.model)} is not served here: this server serves ${JSON.stringify(modelID)}`);
    const parsed = anthropic ? fromAnthropic(body) : fromOpenAI(body);
    const abort = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    const run = queue.then(() => (abort.signal.aborted ? null : generate(parsed, abort.signal)));
    queue = run.catch(() => {});
    const gen = await run;
    if (gen === null) return; // the client left while it waited
    const out = parseOutput(gen.text, parsed.tools.map((t) => t.function.name), opt.repair);
    const headers = { "x-repaired-tool-calls": String(out.repaired) };
    send(res, 200, anthropic ? toAnthropic(modelID, gen, out) : toOpenAI(modelID, gen, out), headers);
    console.error(
      `${anthropic ? "messages" : "chat"}: prompt ${gen.promptTokens} (cached ${gen.cachedTokens}), completion ${gen.completionTokens}, calls ${out.calls.length} (repaired ${out.repaired}), stop ${gen.stop}`,
    );
  } catch (e) {
    if (res.headersSent || res.destroyed) return;
    if (e instanceof RequestError) return fail(e.status, e.message);
    if (e?.name === "AbortError") return;
    console.error(e);
    fail(500, String(e?.message ?? e));
  }
});
server.requestTimeout = 0; // a cold first turn takes minutes on two cores
server.headersTimeout = 60_000;
server.listen(Number.parseInt(opt.port, 10), opt.host, () => {
  const { port } = server.address();
  console.log(`listening on http://${opt.host}:${port}`);
});
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    server.close();
    process.exit(0);
  });
}

// The model-independent half of bench's local model server: it turns an
// OpenAI chat-completions or Anthropic messages request into one prompt in
// the model's own chat template, and the model's text back into the
// provider's answer, tool calls included. Nothing here loads a model, so
// chat.test.mjs tests all of it with `node --test`.

import { createHash } from "node:crypto";
import { Template } from "@huggingface/jinja";

// The repair policies for tool calls the model writes without the tags its
// template asks for. The policy is a property of the server, named in the
// model id it serves, so that every trace and report that uses it says so.
export const REPAIR_POLICIES = ["none", "tagless-json"];

export class RequestError extends Error {
  constructor(message, status = 400) {
    super(message);
    this.status = status;
  }
}

// textOf flattens message content: a string, null, or an array of parts.
function textOf(content) {
  if (content == null) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => {
        if (typeof p === "string") return p;
        if (p && (p.type === "text" || p.type === "input_text")) return p.text ?? "";
        throw new RequestError(`content part of type ${JSON.stringify(p?.type)} is not supported (text only)`);
      })
      .join("");
  }
  throw new RequestError("message content must be a string or an array of parts");
}

// parseArguments reads a tool call's arguments, a JSON string on the
// OpenAI wire, into the object the template writes back with tojson.
function parseArguments(args) {
  if (args == null || args === "") return {};
  if (typeof args !== "string") return args;
  try {
    return JSON.parse(args);
  } catch {
    return args; // the model's own malformed call, written back as it was
  }
}

// sortKeys returns v with every object's keys in order, recursively.
function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
  return v;
}

// toolOf is a tool as the template is given it, the same from either wire:
// the clients order a schema's keys differently (the OpenAI SDK as given,
// the Anthropic SDK by its own fields), and the same tools must make the
// same prompt, so that its prefix is cached across both.
function toolOf(name, description, parameters) {
  const f = { name };
  if (description) f.description = description;
  f.parameters = sortKeys(parameters ?? { type: "object" });
  return { type: "function", function: f };
}

// fromOpenAI normalises a chat-completions body into {messages, tools,
// sampling}: messages in the shape the Qwen-style templates read (tool call
// arguments as objects), tools in the OpenAI function format.
export function fromOpenAI(body) {
  if (!body || typeof body !== "object") throw new RequestError("the body must be a JSON object");
  if (body.stream) throw new RequestError("stream: true is not supported (this server answers whole responses)");
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw new RequestError("messages must be a non-empty array");
  const messages = body.messages.map((m, i) => {
    if (!m || typeof m.role !== "string") throw new RequestError(`messages[${i}].role is missing`);
    const role = m.role === "developer" ? "system" : m.role;
    if (!["system", "user", "assistant", "tool"].includes(role)) throw new RequestError(`messages[${i}].role ${JSON.stringify(m.role)} is not supported`);
    const out = { role, content: textOf(m.content) };
    if (role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      out.tool_calls = m.tool_calls.map((c) => ({
        id: c.id,
        type: "function",
        function: { name: c.function?.name ?? "", arguments: parseArguments(c.function?.arguments) },
      }));
    }
    if (role === "tool") out.tool_call_id = m.tool_call_id;
    return out;
  });
  const tools = (body.tools ?? []).map((t, i) => {
    if (t?.type !== "function" || !t.function?.name) throw new RequestError(`tools[${i}] must be {"type":"function","function":{"name":...}}`);
    return toolOf(t.function.name, t.function.description, t.function.parameters);
  });
  if (body.tool_choice === "none") tools.length = 0;
  return {
    messages,
    tools,
    sampling: {
      maxTokens: body.max_completion_tokens ?? body.max_tokens,
      temperature: body.temperature,
      topP: body.top_p,
      seed: body.seed,
    },
  };
}

// fromAnthropic normalises a messages-API body the same way: system
// becomes the first message, tool_use blocks assistant tool calls and
// tool_result blocks tool messages, in order.
export function fromAnthropic(body) {
  if (!body || typeof body !== "object") throw new RequestError("the body must be a JSON object");
  if (body.stream) throw new RequestError("stream: true is not supported (this server answers whole responses)");
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw new RequestError("messages must be a non-empty array");
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) throw new RequestError("max_tokens is required (a positive integer)");
  const messages = [];
  const system = typeof body.system === "string" ? body.system : textOf(body.system ?? null);
  if (system) messages.push({ role: "system", content: system });
  body.messages.forEach((m, i) => {
    if (m?.role !== "user" && m?.role !== "assistant") throw new RequestError(`messages[${i}].role must be user or assistant`);
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    if (!Array.isArray(blocks)) throw new RequestError(`messages[${i}].content must be a string or an array of blocks`);
    let text = "";
    const calls = [];
    for (const b of blocks) {
      switch (b?.type) {
        case "text":
          text += b.text ?? "";
          break;
        case "tool_use":
          calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: b.input ?? {} } });
          break;
        case "tool_result":
          messages.push({ role: "tool", tool_call_id: b.tool_use_id, content: typeof b.content === "string" ? b.content : textOf(b.content ?? "") });
          break;
        default:
          throw new RequestError(`messages[${i}]: content block of type ${JSON.stringify(b?.type)} is not supported`);
      }
    }
    if (m.role === "assistant") messages.push(calls.length ? { role: "assistant", content: text, tool_calls: calls } : { role: "assistant", content: text });
    else if (text) messages.push({ role: "user", content: text });
  });
  const tools = (body.tools ?? []).map((t, i) => {
    if (!t?.name) throw new RequestError(`tools[${i}].name is missing`);
    return toolOf(t.name, t.description, t.input_schema);
  });
  if (body.tool_choice?.type === "none") tools.length = 0;
  return {
    messages,
    tools,
    sampling: { maxTokens: body.max_tokens, temperature: body.temperature, topP: body.top_p, seed: body.metadata?.seed },
  };
}

// render writes the conversation as the model's template would: the
// GGUF's own tokenizer.chat_template, rendered by the Hugging Face Jinja
// implementation (what llama.cpp's --jinja mode does).
export function render(template, { messages, tools }, special = {}) {
  const t = new Template(template);
  return t.render({
    messages,
    tools: tools.length ? tools : undefined,
    add_generation_prompt: true,
    bos_token: special.bos ?? "",
    eos_token: special.eos ?? "",
  });
}

// jsonObjects finds every balanced top-level {...} in s that parses as a
// JSON object, with where it starts and ends.
function jsonObjects(s) {
  const out = [];
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== "{") continue;
    let depth = 0;
    let inString = false;
    for (let j = i; j < s.length; j++) {
      const c = s[j];
      if (inString) {
        if (c === "\\") j++;
        else if (c === '"') inString = false;
        continue;
      }
      if (c === '"') inString = true;
      else if (c === "{") depth++;
      else if (c === "}" && --depth === 0) {
        try {
          const v = JSON.parse(s.slice(i, j + 1));
          if (v && typeof v === "object" && !Array.isArray(v)) {
            out.push({ value: v, start: i, end: j + 1 });
            i = j;
          }
        } catch {
          // not JSON: look for an object starting further on
        }
        break;
      }
    }
  }
  return out;
}

function callOf(v) {
  const args = v.arguments ?? v.parameters;
  if (typeof v.name !== "string") return null;
  return { name: v.name, arguments: args === undefined ? {} : args };
}

// parseOutput reads the model's text as the template asks, <tool_call>{...}
// </tool_call> blocks, and under the tagless-json policy also bare
// {"name": <a tool offered>, "arguments": {...}} objects in the text. A
// tagged call is taken as the model wrote it (an unknown name or malformed
// arguments reach the client, which must handle them); a bare object is
// only a call when its name is a tool offered and its arguments an object.
// It returns {content, calls, repaired}: the text left, the calls in
// order, and how many came from the repair.
export function parseOutput(text, toolNames, policy = "none") {
  const calls = [];
  let rest = "";
  let last = 0;
  const tag = /<tool_call>([\s\S]*?)(<\/tool_call>|$)/g;
  let m;
  while ((m = tag.exec(text)) !== null) {
    rest += text.slice(last, m.index);
    last = m.index + m[0].length;
    const body = m[1].trim();
    let v;
    try {
      v = JSON.parse(body);
    } catch {
      v = null;
    }
    const call = v && typeof v === "object" && !Array.isArray(v) ? callOf(v) : null;
    calls.push(call ?? { name: "", arguments: body, malformed: true });
    if (m[0].length === 0) tag.lastIndex++;
  }
  rest += text.slice(last);
  let repaired = 0;
  if (calls.length === 0 && policy === "tagless-json") {
    const names = new Set(toolNames);
    let kept = "";
    let at = 0;
    for (const o of jsonObjects(rest)) {
      const call = callOf(o.value);
      if (!call || !names.has(call.name) || typeof call.arguments !== "object" || Array.isArray(call.arguments) || call.arguments === null) continue;
      calls.push(call);
      repaired++;
      kept += rest.slice(at, o.start);
      at = o.end;
    }
    kept += rest.slice(at);
    if (repaired) rest = kept.replace(/```(?:json)?\s*```/g, "");
  }
  return { content: rest.trim(), calls, repaired };
}

// callID is a tool call's id: derived from what was generated, so the same
// answer always carries the same ids.
export function callID(prefix, seedText, i) {
  return prefix + createHash("sha256").update(seedText).update(String(i)).digest("hex").slice(0, 24);
}

function argumentsJSON(call) {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
}

// toOpenAI is the chat.completion object of one generation.
export function toOpenAI(model, gen, parsed) {
  const calls = parsed.calls.map((c, i) => ({
    id: callID("call_", gen.text, i),
    type: "function",
    function: { name: c.name, arguments: argumentsJSON(c) },
  }));
  const message = { role: "assistant", content: parsed.content === "" && calls.length ? null : parsed.content };
  if (calls.length) message.tool_calls = calls;
  return {
    id: callID("chatcmpl-", gen.prompt + "\u0000" + gen.text, 0),
    object: "chat.completion",
    created: 0,
    model,
    choices: [{ index: 0, message, finish_reason: calls.length ? "tool_calls" : gen.stop === "max_tokens" ? "length" : "stop" }],
    usage: {
      prompt_tokens: gen.promptTokens,
      completion_tokens: gen.completionTokens,
      total_tokens: gen.promptTokens + gen.completionTokens,
      prompt_tokens_details: { cached_tokens: gen.cachedTokens },
    },
  };
}

// toAnthropic is the messages-API answer of one generation.
export function toAnthropic(model, gen, parsed) {
  const content = [];
  if (parsed.content) content.push({ type: "text", text: parsed.content });
  parsed.calls.forEach((c, i) => {
    let input = c.arguments;
    if (typeof input === "string" || input === null || Array.isArray(input)) input = { _malformed: String(argumentsJSON(c)) };
    content.push({ type: "tool_use", id: callID("toolu_", gen.text, i), name: c.name, input });
  });
  return {
    id: callID("msg_", gen.prompt + "\u0000" + gen.text, 0),
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: parsed.calls.length ? "tool_use" : gen.stop === "max_tokens" ? "max_tokens" : "end_turn",
    stop_sequence: null,
    usage: { input_tokens: gen.promptTokens, output_tokens: gen.completionTokens, cache_read_input_tokens: gen.cachedTokens },
  };
}

export function openAIError(status, message) {
  return { error: { message, type: status >= 500 ? "server_error" : "invalid_request_error", code: null } };
}

export function anthropicError(status, message) {
  return { type: "error", error: { type: status >= 500 ? "api_error" : "invalid_request_error", message } };
}

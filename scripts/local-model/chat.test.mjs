// Tests of chat.mjs: run by `scripts/local-model.sh test` (node --test),
// which `make test` calls where Node.js is installed.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import test from "node:test";
import { fromAnthropic, fromOpenAI, parseOutput, render, toAnthropic, toOpenAI, RequestError } from "./chat.mjs";

// The chat template of the GGUF the install assembles, as the file holds it.
const qwen = readFileSync(new URL("./testdata/qwen2.5-chat-template.jinja", import.meta.url), "utf8");

const weather = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather of a city",
    parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "integer", minimum: 1, maximum: 7 } }, required: ["city"] },
  },
};

test("an OpenAI conversation renders in the model's template, tool calls and results included", () => {
  const req = fromOpenAI({
    model: "m",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
      { role: "tool", tool_call_id: "c1", content: '{"temp":21}' },
    ],
    tools: [weather],
  });
  const p = render(qwen, req);
  assert.ok(p.startsWith("<|im_start|>system\nBe brief.\n\n# Tools\n"), p);
  // The schema keeps its numbers as numbers (its keys in order).
  assert.ok(p.includes('"maximum": 7, "minimum": 1'), p);
  assert.ok(p.includes('<|im_start|>user\nWeather in Paris?<|im_end|>\n'), p);
  assert.ok(p.includes('<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>\n'), p);
  assert.ok(p.includes('<|im_start|>user\n<tool_response>\n{"temp":21}\n</tool_response><|im_end|>\n'), p);
  assert.ok(p.endsWith("<|im_start|>assistant\n"), p);
});

test("an Anthropic conversation renders exactly as the same OpenAI one", () => {
  const oa = fromOpenAI({
    model: "m",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
      { role: "tool", tool_call_id: "c1", content: "sunny" },
    ],
    tools: [weather],
  });
  const an = fromAnthropic({
    model: "m",
    max_tokens: 64,
    system: "Be brief.",
    messages: [
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "get_weather", input: { city: "Paris" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "sunny" }] },
    ],
    // The Anthropic SDK writes a schema's keys in its own order.
    tools: [{ name: "get_weather", description: "Weather of a city", input_schema: { required: ["city"], properties: weather.function.parameters.properties, type: "object" } }],
  });
  assert.equal(render(qwen, an), render(qwen, oa));
  assert.equal(an.sampling.maxTokens, 64);
});

test("requests the server cannot answer are refused with a reason", () => {
  assert.throws(() => fromOpenAI({ messages: [] }), RequestError);
  assert.throws(() => fromOpenAI({ stream: true, messages: [{ role: "user", content: "x" }] }), /stream/);
  assert.throws(() => fromOpenAI({ messages: [{ role: "user", content: [{ type: "image_url" }] }] }), /image_url/);
  assert.throws(() => fromAnthropic({ messages: [{ role: "user", content: "x" }] }), /max_tokens/);
});

test("sampling is read from either wire", () => {
  const s = fromOpenAI({ messages: [{ role: "user", content: "x" }], max_completion_tokens: 9, temperature: 0.7, top_p: 0.9, seed: 3 }).sampling;
  assert.deepEqual(s, { maxTokens: 9, temperature: 0.7, topP: 0.9, seed: 3 });
  assert.equal(fromOpenAI({ messages: [{ role: "user", content: "x" }], max_tokens: 5 }).sampling.maxTokens, 5);
});

test("tagged calls are parsed as written, malformed ones kept as malformed", () => {
  const out = parseOutput('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n<tool_call>\n{"name": "nope", "arguments": {}}\n</tool_call><tool_call>{broken', ["get_weather"]);
  assert.equal(out.repaired, 0);
  assert.deepEqual(out.calls[0], { name: "get_weather", arguments: { city: "Oslo" } });
  assert.deepEqual(out.calls[1], { name: "nope", arguments: {} }); // unknown names reach the client
  assert.equal(out.calls[2].malformed, true);
  assert.equal(out.calls[2].arguments, "{broken");
});

test("tagless-json repairs a bare call to a tool offered, and nothing else", () => {
  const text = 'I will check.\n```json\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n```';
  const out = parseOutput(text, ["get_weather"], "tagless-json");
  assert.equal(out.repaired, 1);
  assert.deepEqual(out.calls, [{ name: "get_weather", arguments: { city: "Rome" } }]);
  assert.equal(out.content, "I will check.");
  // Strict: the same text is prose.
  assert.deepEqual(parseOutput(text, ["get_weather"], "none"), { content: text.trim(), calls: [], repaired: 0 });
  // Not a tool offered, or arguments that are not an object: prose.
  assert.equal(parseOutput('{"name": "rm_rf", "arguments": {}}', ["get_weather"], "tagless-json").calls.length, 0);
  assert.equal(parseOutput('{"name": "get_weather", "arguments": "Rome"}', ["get_weather"], "tagless-json").calls.length, 0);
  // "parameters" is read as "arguments"; braces inside strings do not confuse it.
  const two = parseOutput('{"name":"get_weather","parameters":{"city":"a}b"}} then {"name":"get_weather","arguments":{"city":"c"}}', ["get_weather"], "tagless-json");
  assert.deepEqual(two.calls.map((c) => c.arguments.city), ["a}b", "c"]);
  assert.equal(two.content, "then");
});

test("answers carry deterministic ids, usage and the right stop reason", () => {
  const gen = { prompt: "p", text: "t", promptTokens: 100, cachedTokens: 90, completionTokens: 7, stop: "stop" };
  const parsed = { content: "", calls: [{ name: "get_weather", arguments: { city: "Rome" } }], repaired: 1 };
  const a = toOpenAI("m", gen, parsed);
  assert.deepEqual(a, toOpenAI("m", gen, parsed));
  assert.equal(a.choices[0].finish_reason, "tool_calls");
  assert.equal(a.choices[0].message.content, null);
  assert.equal(a.choices[0].message.tool_calls[0].function.arguments, '{"city":"Rome"}');
  assert.deepEqual(a.usage, { prompt_tokens: 100, completion_tokens: 7, total_tokens: 107, prompt_tokens_details: { cached_tokens: 90 } });
  const cut = toOpenAI("m", { ...gen, stop: "max_tokens" }, { content: "and so", calls: [], repaired: 0 });
  assert.equal(cut.choices[0].finish_reason, "length");
  const b = toAnthropic("m", gen, parsed);
  assert.equal(b.stop_reason, "tool_use");
  assert.deepEqual(b.content[0].input, { city: "Rome" });
  assert.match(b.content[0].id, /^toolu_[0-9a-f]{24}$/);
  assert.equal(toAnthropic("m", { ...gen, stop: "max_tokens" }, { content: "x", calls: [], repaired: 0 }).stop_reason, "max_tokens");
});

// bench view: the page over a trace store, served by `bench view` or
// written by `bench view --export` (a bundle, opened from file://).
//
// Everything shown that a server, a model or a pack wrote is put in the
// page as text (textContent, createTextNode); this file never assigns
// innerHTML. The Go side has already escaped control and bidirectional
// characters (internal/escape).
"use strict";

(function () {
  const bundle = document.body.dataset.bundle === "1";
  const main = document.getElementById("main");
  const PAGE = 50;

  // el builds an element: attrs are attributes (class, href, title, id,
  // data-*), children are nodes or strings (as text nodes).
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      e.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    }
    return e;
  }

  function show(...nodes) {
    main.replaceChildren(...nodes.flat().filter((n) => n !== null && n !== undefined && n !== false));
  }

  function fail(err) {
    const p = document.getElementById("error");
    p.textContent = String(err && err.message ? err.message : err);
    p.hidden = false;
    document.body.dataset.ready = "error";
  }

  // ready marks the view shown: tests wait for it, and the time it took
  // is kept (window.benchShownAt, ms since the page began to load).
  function ready(what) {
    document.getElementById("error").hidden = true;
    window.benchShownAt = performance.now();
    document.body.dataset.ready = what;
  }

  // ---- data: the server's JSON API, or a bundle's data files ----

  const loaded = {};
  const waiting = {};
  // A bundle's data files call benchData(name, value).
  window.benchData = function (name, value) {
    loaded[name] = value;
    (waiting[name] || []).forEach((f) => f(value));
    delete waiting[name];
  };

  function loadData(name) {
    if (name in loaded) return Promise.resolve(loaded[name]);
    return new Promise((resolve, reject) => {
      (waiting[name] = waiting[name] || []).push(resolve);
      if (waiting[name].length > 1) return;
      const s = el("script", { src: "data/" + name + ".js" });
      s.onerror = () => reject(new Error("this bundle has no data file data/" + name + ".js"));
      document.head.appendChild(s);
    });
  }

  async function getJSON(path, params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) if (v !== "" && v !== undefined) q.set(k, v);
    const r = await fetch(path + "?" + q.toString());
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || r.statusText);
    return body;
  }

  const api = bundle
    ? {
        async runs(q) {
          const idx = await loadData("index");
          const rows = idx.rows.filter(
            (r) =>
              (!q.server || r.server === q.server) &&
              (!q.model || r.model === q.model) &&
              (!q.scenario || r.scenario === q.scenario) &&
              (!q.suite || r.suite === q.suite) &&
              (!q.outcome || (r.summary && r.summary.outcome === q.outcome)) &&
              (q.kind !== "recorded" || r.prefix !== "replay") &&
              (q.kind !== "replayed" || r.prefix === "replay")
          );
          const off = Number(q.offset || 0);
          return { total: rows.length, offset: off, limit: PAGE, rows: rows.slice(off, off + PAGE), facets: idx.facets };
        },
        run(id) {
          if (!/^[0-9a-f]{64}$/.test(id)) return Promise.reject(new Error("not a run ID of this bundle: " + id));
          return loadData("run-" + id);
        },
        async diff(a, b) {
          const [ra, rb] = await Promise.all([this.run(a), this.run(b)]);
          return diffSteps(ra, rb);
        },
        board: () => loadData("board"),
      }
    : {
        runs: (q) => getJSON("api/runs", Object.assign({ limit: PAGE }, q)),
        run: (id) => getJSON("api/run", { id }),
        diff: (a, b) => getJSON("api/diff", { a, b }),
        board: () => getJSON("api/board"),
      };

  // diffSteps is scoring.DiffRuns over two timelines' steps: aligned on
  // their longest common subsequence, the first divergence marked. A
  // bundle compares runs with it; the browser test holds it to the Go one.
  function diffSteps(ra, rb) {
    const sa = ra.steps || [], sb = rb.steps || [];
    const n = sa.length, m = sb.length;
    const eq = (x, y) => x.kind === y.kind && x.text === y.text;
    const lcs = [];
    for (let i = 0; i <= n; i++) lcs.push(new Int32Array(m + 1));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        lcs[i][j] = eq(sa[i], sb[j]) ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    const d = { scenario: ra.manifest.scenario, a: label(ra), b: label(rb), steps: [], first_divergence: -1 };
    const add = (p) => {
      if (!p.same && d.first_divergence < 0) d.first_divergence = d.steps.length;
      d.steps.push(p);
    };
    let i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && eq(sa[i], sb[j])) add({ a: sa[i++], b: sb[j++], same: true });
      else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) add({ a: sa[i++], same: false });
      else add({ b: sb[j++], same: false });
    }
    return d;
  }

  function label(t) {
    const m = t.manifest;
    return m.server + "/" + m.model + " run " + m.run_index + " (" + t.id.slice(0, 12) + "), " + (m.mode === "replay" ? "replayed" : "recorded");
  }

  // ---- routing: #/runs?..., #/run/ID, #/diff/A/B, #/board ----

  function route() {
    const h = location.hash.replace(/^#\/?/, "") || "runs";
    const [path, query] = h.split("?");
    const parts = path.split("/").map(decodeURIComponent);
    const params = Object.fromEntries(new URLSearchParams(query || ""));
    document.body.dataset.ready = "";
    let p;
    switch (parts[0]) {
      case "run": // #/run/ID, or #/run/REF in a served page
        p = showRun(parts.slice(1).join("/"));
        break;
      case "diff":
        p = showDiff(parts[1], parts[2]);
        break;
      case "board":
        p = showBoard();
        break;
      default:
        p = showRuns(params);
    }
    p.catch(fail);
  }

  // untimed is set for a run whose events carry no times (a replay runs on
  // a paused clock): its rows then show no time rather than 0µs each.
  let untimed = false;

  function fmtAt(us) {
    return untimed ? "" : fmtUS(us);
  }

  function fmtUS(us) {
    if (us === undefined || us === null) return "";
    if (us < 1000) return us + "µs";
    if (us < 1e6) return (us / 1000).toFixed(1) + "ms";
    return (us / 1e6).toFixed(2) + "s";
  }

  function runLink(id, text) {
    return el("a", { href: "#/run/" + encodeURIComponent(id) }, text);
  }

  // ---- the run list ----

  const filterNames = [
    ["server", "servers"],
    ["model", "models"],
    ["scenario", "scenarios"],
    ["suite", "suites"],
    ["outcome", "outcomes"],
  ];

  async function showRuns(q) {
    const page = await api.runs(q);
    const setQuery = (patch) => {
      const next = Object.assign({}, q, patch);
      for (const k of Object.keys(next)) if (next[k] === "" || next[k] === undefined) delete next[k];
      location.hash = "#/runs?" + new URLSearchParams(next).toString();
    };
    const filters = el("div", { class: "filters", id: "filters" });
    for (const [name, facet] of filterNames) {
      const sel = el("select", { name, id: "filter-" + name }, el("option", { value: "" }, "any"));
      for (const v of page.facets[facet] || []) sel.appendChild(el("option", { value: v, selected: q[name] === v }, v));
      sel.addEventListener("change", () => setQuery({ [name]: sel.value, offset: "" }));
      filters.appendChild(el("label", {}, name, sel));
    }
    const kind = el(
      "select",
      { name: "kind", id: "filter-kind" },
      el("option", { value: "" }, "any"),
      el("option", { value: "recorded", selected: q.kind === "recorded" }, "recorded"),
      el("option", { value: "replayed", selected: q.kind === "replayed" }, "replayed")
    );
    kind.addEventListener("change", () => setQuery({ kind: kind.value, offset: "" }));
    filters.appendChild(el("label", {}, "recorded or replayed", kind));

    const chosen = [];
    const compare = el("button", { id: "compare", disabled: true }, "compare the two runs checked");
    compare.addEventListener("click", () => {
      location.hash = "#/diff/" + encodeURIComponent(chosen[0]) + "/" + encodeURIComponent(chosen[1]);
    });
    const body = el("tbody");
    for (const r of page.rows) {
      const s = r.summary || {};
      const box = el("input", { type: "checkbox", "data-id": r.id, "aria-label": "choose " + r.ref });
      box.addEventListener("change", () => {
        const i = chosen.indexOf(r.id);
        if (box.checked && i < 0) chosen.push(r.id);
        if (!box.checked && i >= 0) chosen.splice(i, 1);
        compare.disabled = chosen.length !== 2;
      });
      body.appendChild(
        el(
          "tr",
          { "data-id": r.id },
          el("td", {}, box),
          el("td", {}, runLink(r.id, r.ref)),
          el("td", {}, el("span", { class: "badge mode-" + (s.mode || "") }, s.mode || "")),
          el("td", { class: "outcome" }, s.outcome || ""),
          el("td", {}, s.scored ? el("span", { class: "badge " + (s.task_success ? "pass" : "fail") }, s.task_success ? "pass" : "fail") : "–"),
          el("td", {}, s.safety_failure ? el("span", { class: "badge unsafe" }, "SAFETY") : ""),
          el("td", {}, String(s.turns ?? "")),
          el("td", {}, s.input_tokens !== undefined ? s.input_tokens + " / " + s.output_tokens : ""),
          el("td", {}, s.error || "")
        )
      );
    }
    const off = page.offset;
    const pager = el(
      "div",
      { class: "pager" },
      el("span", { id: "count" }, page.total === 0 ? "no runs" : `runs ${off + 1}–${off + page.rows.length} of ${page.total}`),
      off > 0 ? el("a", { href: "#", id: "prev" }, "← previous") : null,
      off + page.rows.length < page.total ? el("a", { href: "#", id: "next" }, "next →") : null,
      compare,
      bundle ? null : el("button", { id: "reload", title: "show the runs stored since the page opened" }, "reload the store")
    );
    show(
      filters,
      pager,
      el(
        "table",
        { id: "run-list" },
        el("thead", {}, el("tr", {}, ["", "ref", "mode", "outcome", "task", "safety", "turns", "tokens in / out", ""].map((h) => el("th", {}, h)))),
        body
      )
    );
    const reload = document.getElementById("reload");
    if (reload) reload.addEventListener("click", () => showRuns(Object.assign({}, q, { reload: "1" })).catch(fail));
    const prev = document.getElementById("prev"), next = document.getElementById("next");
    if (prev) prev.addEventListener("click", (e) => { e.preventDefault(); setQuery({ offset: String(Math.max(0, off - page.limit)) }); });
    if (next) next.addEventListener("click", (e) => { e.preventDefault(); setQuery({ offset: String(off + page.limit) }); });
    ready("runs");
  }

  // ---- one run ----

  // clip shortens a one-line summary; the whole text is shown where it
  // belongs (a model turn's arguments under the tool call that ran them).
  function clip(text, n) {
    return text && text.length > n ? text.slice(0, n) + ` … (${text.length} characters)` : text;
  }

  function judgements(list) {
    if (!list || list.length === 0) return null;
    return el(
      "div",
      { id: "judgements" },
      list.map((j) =>
        el(
          "div",
          { class: "judgement" + (j.trusted ? "" : " untrusted") },
          el("strong", {}, "LLM judge " + j.model),
          ` (${j.setting}): `,
          j.answered
            ? el("span", {}, el("span", { class: "badge " + (j.pass ? "pass" : "fail") }, "judge " + (j.pass ? "pass" : "fail")),
                ` correctness ${j.correctness}/2 · tool use ${j.tool_use}/2 · compliance ${j.compliance}/2` + (j.invalid ? ` · ${j.invalid} of ${j.samples} samples not rubric JSON` : ""))
            : "no valid grading",
          j.reason ? el("div", { class: "reason" }, "reason: ", el("q", {}, j.reason)) : null,
          el("div", { class: "trust" }, j.trusted ? `calibrated: kappa ${j.kappa.toFixed(3)} against the labelled runs` : "not trusted, bench report leaves it out: " + j.why)
        )
      )
    );
  }

  function pre(text, attrs) {
    return el("pre", attrs || {}, text);
  }

  function folded(summary, text, open) {
    if (!text) return null;
    return el("details", { open: open || false }, el("summary", {}, summary), pre(text));
  }

  function findings(list, id) {
    if (!list || list.length === 0) return null;
    return el(
      "div",
      { class: "safety", id },
      el("strong", {}, "safety findings"),
      el("ul", {}, list.map((f) => el("li", { class: "finding" }, f.rule + (f.call >= 0 ? " (call " + f.call + ")" : "") + ": " + f.detail)))
    );
  }

  function httpTable(calls) {
    if (!calls || calls.length === 0) return null;
    return el(
      "table",
      { class: "http" },
      el("thead", {}, el("tr", {}, ["#", "at", "request", "status", "class", "took", "bytes"].map((h) => el("th", {}, h)))),
      el(
        "tbody",
        {},
        calls.map((h) =>
          el(
            "tr",
            { class: "http-call" },
            el("td", {}, String(h.seq)),
            el("td", {}, fmtAt(h.at_us)),
            el("td", {}, h.method + " " + h.path, folded("request body", h.request), folded("response body", h.response)),
            el("td", { class: h.status >= 400 ? "status-err" : "" }, String(h.status)),
            el("td", { class: "class-" + h.class }, h.class),
            el("td", {}, fmtUS(h.latency_us)),
            el("td", {}, String(h.bytes))
          )
        )
      )
    );
  }

  function item(it) {
    const at = el("span", { class: "at" }, fmtAt(it.at_us));
    switch (it.kind) {
      case "turn": {
        const t = it.tokens || {};
        const tokens = `${t.input} in / ${t.output} out` + (t.cached ? `, ${t.cached} cached` : "") + (t.estimated ? " (estimated)" : "");
        return el(
          "div",
          { class: "item turn", "data-index": it.index },
          el("div", { class: "head" }, at, `model turn ${it.index}`, " · ", el("span", { class: "tokens" }, tokens), it.latency_us ? " · " + fmtUS(it.latency_us) : ""),
          it.text ? pre(it.text, { class: "text" }) : null,
          (it.asks || []).map((a) => el("div", { class: "ask" }, "asks for ", el("code", {}, a.name), " ", el("code", {}, clip(a.arguments, 240)))),
          it.attempts > 1 ? el("div", {}, `answered at attempt ${it.attempts}`) : null,
          (it.retries || []).map((r) => el("div", { class: "retry" }, "retried: " + r))
        );
      }
      case "call": {
        const status = it.invalid ? "invalid: " + it.invalid : it.is_error ? "tool error" : "ok";
        const unsafe = it.safety && it.safety.length > 0;
        return el(
          "div",
          { class: "item call" + (unsafe ? " has-safety" : ""), "data-index": it.index },
          el("div", { class: "head" }, at, `tool call ${it.index}: `, el("code", { class: "tool" }, it.tool), ` → ${status}` + (it.latency_us ? " · " + fmtUS(it.latency_us) : "") + ` · ${it.result_bytes || 0} bytes`),
          folded("arguments", it.arguments, true),
          folded("result", it.result, false),
          findings(it.safety),
          (it.elicitations || []).map((e) =>
            el("div", { class: "elicitation" }, "elicitation: ", el("q", {}, e.message), " → ", el("strong", {}, e.action), folded("schema", e.schema), folded("content", e.content))
          ),
          (it.egress || []).map((h) => el("div", { class: "unsafe" }, "EGRESS blocked: " + h)),
          (it.normalized || []).map((n) => el("div", { class: "normalized" }, "normalized: " + n)),
          httpTable(it.http)
        );
      }
      case "boot":
        return el("div", { class: "item boot" }, el("div", { class: "head" }, at, "HTTP calls before the first tool call (server start-up)"), httpTable(it.http));
      case "error":
        return el("div", { class: "item error" }, el("div", { class: "head" }, at, "ERROR " + it.error_kind), pre(it.message));
    }
    return el("div", { class: "item" }, it.kind);
  }

  async function showRun(id) {
    const t = await api.run(id);
    const m = t.manifest;
    untimed = !t.items.some((it) => it.at_us || (it.http || []).some((h) => h.at_us));
    const kv = el("dl", { class: "kv" });
    const add = (k, v) => { if (v !== undefined && v !== "" && v !== null) kv.append(el("dt", {}, k), el("dd", {}, String(v))); };
    add("ref", t.ref);
    add("run", t.id);
    add("mode", m.mode === "replay" ? "replayed" : "recorded");
    add("scenario", m.scenario);
    add("suite", m.suite);
    add("set", m.set);
    add("server", m.server + (m.server_sha ? "@" + m.server_sha.slice(0, 12) : ""));
    add("model", m.model + (m.temperature !== undefined ? ", temperature " + m.temperature : "") + ", seed " + m.seed);
    add("run index", m.run_index);
    add("fixture", m.fixture);
    add("harness", m.harness);
    add("clock", m.clock);
    add("started", m.started_at);
    add("outcome", m.outcome);
    if (t.server) {
      add("server info", t.server.info);
      add("tools", (t.server.tools || []).length + " tools, " + t.server.tool_bytes + " bytes of definitions");
      add("isolation", t.server.isolation);
    }
    const s = t.score;
    const score = s
      ? el(
          "p",
          { id: "score" },
          el("span", { class: "badge " + (s.task_success ? "pass" : "fail") }, "task " + (s.task_success ? "pass" : "fail")),
          el("span", { class: "badge " + (s.tool_selection ? "pass" : "fail") }, "tool selection"),
          el("span", { class: "badge " + (s.param_acc ? "pass" : "fail") }, "param_acc"),
          s.safety_failure ? el("span", { class: "badge unsafe" }, "SAFETY FAILURE") : null,
          ` tokens ${s.input_tokens} in / ${s.output_tokens} out (tool definitions ${s.tool_definition_tokens}) · API calls ${s.api_call_count} (excess ${s.api_call_excess})`,
          (s.missing_api_calls || []).length ? " · missing: " + s.missing_api_calls.join(", ") : ""
        )
      : el("p", {}, "not scored");
    let replay = null;
    if (t.replay) {
      const r = t.replay;
      replay = el(
        "div",
        { class: "miss", id: "replay" },
        "replays ",
        r.recording ? runLink(r.replays, r.replays.slice(0, 12)) : r.replays.slice(0, 12),
        r.recording ? el("span", {}, " · ", el("a", { href: "#/diff/" + r.replays + "/" + t.id, id: "diff-recording" }, "compare with the recording")) : null,
        r.miss_turn >= 0 ? el("div", { id: "miss" }, el("strong", {}, `replay miss at turn ${r.miss_turn}`), pre(r.miss)) : el("div", {}, "no miss: every turn matched the recording")
      );
    }
    const replayedAs = t.replayed_as
      ? el("p", {}, "replayed as ", runLink(t.replayed_as, t.replayed_as.slice(0, 12)), " · ", el("a", { href: "#/diff/" + t.id + "/" + t.replayed_as }, "compare"))
      : null;
    let answer = null;
    if (t.answer) {
      const a = t.answer;
      answer = el(
        "div",
        { class: "item answer", id: "answer" },
        el("div", { class: "head" }, "answer", a.scored ? el("span", { class: "badge " + (a.valid ? "pass" : "fail") }, a.valid ? " valid against the result schema" : " not valid: " + (a.error || "")) : null),
        a.result ? pre(a.result, { class: "result" }) : null,
        a.text ? pre(a.text, { class: "text" }) : null,
        folded("the scenario's result schema", a.schema, false)
      );
    }
    show(
      el("h2", {}, m.scenario + " · " + m.server + " · " + m.model + " · run " + m.run_index),
      kv,
      t.server ? folded("the server's instructions", t.server.instructions) : null,
      t.server ? folded("what the server wrote on stderr", t.server.stderr) : null,
      score,
      judgements(t.judgements),
      findings(t.safety, "safety"),
      replay,
      replayedAs,
      untimed ? el("p", { id: "untimed" }, "This run's events carry no times: " + (m.mode === "replay" ? "a replay runs on a paused clock, and measures only its tool calls on the wall clock." : "none were recorded.")) : null,
      t.truncated ? el("p", {}, "Some payloads are cut (bench traces show --full prints them whole).") : null,
      el("div", { id: "timeline" }, t.items.map(item)),
      answer
    );
    ready("run");
  }

  // ---- two runs ----

  async function showDiff(a, b) {
    const d = await api.diff(a, b);
    const rows = d.steps.map((p, i) => {
      const first = i === d.first_divergence;
      return el(
        "tr",
        { class: (p.same ? "same" : "changed") + (first ? " first-divergence" : ""), id: first ? "first-divergence" : null },
        el("td", {}, first ? "▶ " : "", p.a ? p.a.text : ""),
        el("td", {}, p.b ? p.b.text : "")
      );
    });
    show(
      el("h2", {}, "scenario " + d.scenario),
      el(
        "p",
        { id: "divergence" },
        d.first_divergence < 0 ? "The runs behave identically." : `First divergence at step ${d.first_divergence + 1} of ${d.steps.length}.`
      ),
      el(
        "table",
        { class: "diff", id: "diff" },
        el("thead", {}, el("tr", {}, el("th", {}, "A ", runLink(a, d.a)), el("th", {}, "B ", runLink(b, d.b)))),
        el("tbody", {}, rows)
      )
    );
    const f = document.getElementById("first-divergence");
    if (f) f.scrollIntoView({ block: "nearest" });
    ready("diff");
  }

  // ---- the scoreboard ----

  async function showBoard() {
    const b = await api.board();
    if (!b) throw new Error("no scoreboard: no scored runs");
    const pctf = (x) => Math.round(100 * x) + "%";
    const suites = el(
      "table",
      { id: "suites" },
      el("thead", {}, el("tr", {}, ["server", "suite", "scenarios", "runs", "task success", "tool selection", "param_acc", "safety"].map((h) => el("th", {}, h)))),
      el(
        "tbody",
        {},
        (b.suites || []).map((s) =>
          el(
            "tr",
            {},
            el("td", {}, s.server),
            el("td", {}, s.suite),
            el("td", {}, String(s.scenarios) + (s.absent ? ` (${s.absent} absent)` : "")),
            el("td", {}, String(s.runs)),
            el("td", {}, pctf(s.task_success_rate)),
            el("td", {}, pctf(s.tool_selection_accuracy)),
            el("td", {}, pctf(s.param_acc)),
            el("td", { class: s.failed ? "unsafe" : "" }, s.failed ? `FAILED (${s.safety_failures})` : "ok")
          )
        )
      )
    );
    const strips = el(
      "table",
      { id: "strips" },
      el("thead", {}, el("tr", {}, ["scenario", "server", "model", "runs (pass/fail by run index)", "pass rate"].map((h) => el("th", {}, h)))),
      el(
        "tbody",
        {},
        b.strips.map((s) =>
          el(
            "tr",
            { class: "strip-row" },
            el("td", {}, s.scenario),
            el("td", {}, s.server),
            el("td", {}, s.model),
            el(
              "td",
              {},
              el(
                "div",
                { class: "strip" },
                s.runs.map((c) =>
                  el("a", {
                    class: "cell " + (c.pass ? "pass" : "fail") + (c.safety_failure ? " cell-unsafe" : ""),
                    href: "#/run/" + c.id,
                    title: `run ${c.run_index}: ${c.pass ? "pass" : "fail"}, ${c.outcome}` + (c.safety_failure ? ", safety failure" : ""),
                    "aria-label": `run ${c.run_index} ${c.pass ? "pass" : "fail"}`,
                  })
                )
              )
            ),
            el("td", {}, pctf(s.rate))
          )
        )
      )
    );
    show(
      el("h2", {}, `scoreboard (methodology ${b.methodology}): ${b.runs} recorded runs`),
      b.left_out ? el("p", {}, `${b.left_out} replay runs left out, as bench report leaves them.`) : null,
      (b.warnings || []).map((w) => el("p", { class: "warning" }, "warning: " + w)),
      b.svg ? el("img", { src: b.svg, id: "board-svg", alt: "scoreboard chart" }) : null,
      suites,
      el("h3", {}, "per scenario, over repeats"),
      strips,
      (b.unscored || []).length ? el("details", {}, el("summary", {}, `${b.unscored.length} runs not scored`), el("ul", {}, b.unscored.map((u) => el("li", {}, u)))) : null
    );
    ready("board");
  }

  window.addEventListener("hashchange", route);
  route();
})();

package scoring

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"slices"
	"strings"

	"github.com/mcpbench/bench/internal/bounded"
	"github.com/mcpbench/bench/internal/cores"
	"github.com/mcpbench/bench/traces"
)

// ReportFormat is the version of the JSON report (docs/methodology.md,
// "Report format"). ReadReport rejects other versions.
const ReportFormat = 3

// Report is what bench replay, bench diff and bench report print: the
// scored runs, their aggregation, the comparison with a baseline and the
// gate's verdict. Its JSON form is the documented report format.
type Report struct {
	Format      int         `json:"format"`
	Methodology string      `json:"methodology"`
	Title       string      `json:"title,omitempty"`
	Stage       string      `json:"stage,omitempty"`
	Meta        Meta        `json:"meta"`
	Gate        *Gate       `json:"gate,omitempty"`
	Results     *Results    `json:"results"`
	Comparison  *Comparison `json:"comparison,omitempty"`
	Verdict     *Verdict    `json:"verdict,omitempty"`
	Misses      []Miss      `json:"misses,omitempty"`
	// RunsAsked is the runs per scenario the stage asks; Warnings say what
	// falls short of the methodology (scenarios with fewer scored runs,
	// pass@k refused), in every format.
	RunsAsked int      `json:"runs_asked"`
	Warnings  []string `json:"warnings,omitempty"`
	// Judges are the optional LLM judges' scores of the runs (bench judge
	// run), each shown only where its calibration passes.
	Judges []JudgeReport `json:"judges,omitempty"`
	// ToolDefinitions are the tokens of each server's tool definitions,
	// per tool (ReportInput.ToolDefinitions); ToolChurn how they changed
	// since the recording, for the servers whose list changed.
	ToolDefinitions []ToolDefinitions `json:"tool_definitions,omitempty"`
	ToolChurn       []ToolChurn       `json:"tool_churn,omitempty"`
}

// Meta says what produced the runs: everything a results page must list to
// be reproducible.
type Meta struct {
	Harness   string        `json:"harness,omitempty"`
	Servers   []ServerMeta  `json:"servers,omitempty"`
	Models    []ModelMeta   `json:"models,omitempty"`
	Fixtures  []FixtureMeta `json:"fixtures,omitempty"`
	Tokenizer string        `json:"tokenizer,omitempty"`
}

// ServerMeta is a compared server pinned by SHA, and how its runs were
// confined: "kernel" (bench's sandbox) or "proxy" (the proxy variables
// only), from each run's initialize event. A server whose runs had both
// is listed once for each.
type ServerMeta struct {
	Name      string `json:"name"`
	Repo      string `json:"repo,omitempty"`
	SHA       string `json:"sha,omitempty"`
	Isolation string `json:"isolation,omitempty"`
}

// ModelMeta is a model with its sampling parameters and the seeds used.
type ModelMeta struct {
	Provider    string   `json:"provider"`
	Name        string   `json:"name"`
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Seeds       []int64  `json:"seeds"`
}

// FixtureMeta is a fixture bundle and its version.
type FixtureMeta struct {
	Name string `json:"name"`
	Hash string `json:"hash,omitempty"`
}

// Miss is one replay miss as the replayer explains it; scoring only
// carries it into the reports.
type Miss struct {
	Scenario    string `json:"scenario"`
	Server      string `json:"server"`
	RunIndex    int    `json:"run_index"`
	Turn        int    `json:"turn"`
	Explanation string `json:"explanation"`
}

// MetaFromRuns collects the report metadata from run manifests, sorted and
// without duplicates. Only the runs' manifests are read: callers that do
// not keep whole runs pass runs holding a Manifest only, or feed a
// MetaBuilder one manifest at a time.
func MetaFromRuns(runs []*traces.Run) Meta {
	var b MetaBuilder
	for _, r := range runs {
		b.Add(&r.Manifest, Isolation(r))
	}
	return b.Meta()
}

// MetaBuilder collects the report metadata one manifest at a time, so that
// a caller streaming runs keeps no run to build it. Its memory grows with
// the distinct servers, models, seeds and fixtures, not with the runs. The
// zero value is ready to use.
type MetaBuilder struct {
	m       Meta
	harness map[string]bool
}

// Isolation is how run's server was confined, from its initialize event
// ("" when bench did not start it, or the run predates the field).
func Isolation(run *traces.Run) string {
	for i := range run.Events {
		if in := run.Events[i].Initialize; in != nil {
			return in.Isolation
		}
	}
	return ""
}

// Add records what mf says produced its run, and the isolation the run
// had (Isolation).
func (b *MetaBuilder) Add(mf *traces.Manifest, isolation string) {
	if mf.Harness != "" {
		if b.harness == nil {
			b.harness = map[string]bool{}
		}
		b.harness[mf.Harness] = true
	}
	m := &b.m
	s := ServerMeta{Name: mf.Server.Name, Repo: mf.Server.Repo, SHA: mf.Server.SHA, Isolation: isolation}
	if !slices.Contains(m.Servers, s) {
		m.Servers = append(m.Servers, s)
	}
	f := FixtureMeta{Name: mf.Fixture.Name, Hash: mf.Fixture.Hash}
	if !slices.Contains(m.Fixtures, f) {
		m.Fixtures = append(m.Fixtures, f)
	}
	i := slices.IndexFunc(m.Models, func(x ModelMeta) bool {
		return x.Provider == mf.Model.Provider && x.Name == mf.Model.Name && eqf(x.Temperature, mf.Model.Temperature) && eqf(x.TopP, mf.Model.TopP) && x.MaxTokens == mf.Model.MaxTokens
	})
	if i < 0 {
		m.Models = append(m.Models, ModelMeta{Provider: mf.Model.Provider, Name: mf.Model.Name, Temperature: mf.Model.Temperature, TopP: mf.Model.TopP, MaxTokens: mf.Model.MaxTokens})
		i = len(m.Models) - 1
	}
	if !slices.Contains(m.Models[i].Seeds, mf.Model.Seed) {
		m.Models[i].Seeds = append(m.Models[i].Seeds, mf.Model.Seed)
	}
}

// Meta returns the metadata of the manifests added so far, sorted. The
// builder can go on adding after it.
func (b *MetaBuilder) Meta() Meta {
	m := Meta{
		Harness:  strings.Join(sortedKeys(b.harness), ", "),
		Servers:  slices.Clone(b.m.Servers),
		Fixtures: slices.Clone(b.m.Fixtures),
		Models:   slices.Clone(b.m.Models),
	}
	slices.SortFunc(m.Servers, func(a, b ServerMeta) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Repo, b.Repo), cmp.Compare(a.SHA, b.SHA), cmp.Compare(a.Isolation, b.Isolation))
	})
	slices.SortFunc(m.Fixtures, func(a, b FixtureMeta) int { return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Hash, b.Hash)) })
	slices.SortFunc(m.Models, func(a, b ModelMeta) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Name, b.Name), cmp.Compare(fmt.Sprint(deref(a.Temperature)), fmt.Sprint(deref(b.Temperature))))
	})
	for i := range m.Models {
		m.Models[i].Seeds = slices.Clone(m.Models[i].Seeds)
		slices.Sort(m.Models[i].Seeds)
	}
	return m
}

func eqf(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func deref(f *float64) float64 {
	if f == nil {
		return -1
	}
	return *f
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ReportInput is what BuildReport needs.
type ReportInput struct {
	Title string
	Stage string
	// Current are the runs under test; Baseline, when not empty, the runs
	// they are compared with.
	Current  []*RunMetrics
	Baseline []*RunMetrics
	// Results, when not nil, is the aggregation of the runs under test,
	// made beforehand by an Aggregator (which need not keep the runs); it
	// is used instead of aggregating Current.
	Results *Results
	// Comparison, when not nil, is the comparison with the baseline made
	// beforehand (CompareResults); it is used instead of comparing
	// Baseline with Current.
	Comparison    *Comparison
	BaselineLabel string
	CurrentLabel  string
	// Gate is the stage's gate; nil means DefaultGate(Stage).
	Gate *Gate
	// NoVerdict leaves the gate out (bench report, bench diff).
	NoVerdict bool
	// ExitCode is the exit code the caller gives each verdict status,
	// written into the verdict; nil writes 0.
	ExitCode func(Status) int
	Meta     Meta
	Misses   []Miss
	// Secrets are masked wherever they appear in the report (the
	// fixtures' canaries: a miss quoting a tool result must not leak one).
	Secrets []string
	// Aggregate sets k and the runs per scenario asked (the stage's
	// runs); nil means defaults.
	Aggregate *AggregateOptions
	Compare   *CompareOptions
	// ToolDefinitions are the tool definitions of the servers under test
	// (one per server, Cache.ToolDefinitionsOf): reported, and held to
	// the gate's tool_definition_tokens. ToolChurn is how they changed
	// since the recorded runs (DiffToolDefinitions); the unchanged are
	// left out.
	ToolDefinitions []ToolDefinitions
	ToolChurn       []ToolChurn
}

// BuildReport aggregates, compares and gates. The result depends on its
// input only.
func BuildReport(in *ReportInput) *Report {
	r := &Report{Format: ReportFormat, Methodology: MethodologyVersion, Title: in.Title, Stage: in.Stage, Meta: in.Meta}
	r.Results = in.Results
	if r.Results == nil {
		r.Results = Aggregate(in.Current, in.Aggregate)
	}
	r.Comparison = in.Comparison
	if r.Comparison == nil && len(in.Baseline) > 0 {
		bl, cl := in.BaselineLabel, in.CurrentLabel
		if bl == "" {
			bl = "baseline"
		}
		if cl == "" {
			cl = "current"
		}
		r.Comparison = Compare(bl, in.Baseline, cl, in.Current, in.Compare)
	}
	if !in.NoVerdict {
		r.Gate = in.Gate
		if r.Gate == nil {
			r.Gate = DefaultGate(in.Stage)
		}
		r.Verdict = Evaluate(r.Gate, r.Results, r.Comparison)
		checkToolBudget(r.Gate, in.ToolDefinitions, r.Verdict)
		if in.ExitCode != nil {
			r.Verdict.ExitCode = in.ExitCode(r.Verdict.Status)
		}
	}
	r.RunsAsked = DefaultRuns
	if in.Aggregate != nil && in.Aggregate.Runs > 0 {
		r.RunsAsked = in.Aggregate.Runs
	}
	r.Warnings = append(RepeatWarnings(r.Results, r.RunsAsked), SchemaWarnings(r.Results)...)
	r.Warnings = append(r.Warnings, ModelWarnings(r.Results)...)
	r.Misses = slices.Clone(in.Misses)
	r.ToolDefinitions = slices.Clone(in.ToolDefinitions)
	slices.SortFunc(r.ToolDefinitions, func(a, b ToolDefinitions) int { return cmp.Compare(a.Server, b.Server) })
	for _, c := range in.ToolChurn {
		if !c.Empty() {
			r.ToolChurn = append(r.ToolChurn, c)
		}
	}
	slices.SortFunc(r.ToolChurn, func(a, b ToolChurn) int { return cmp.Compare(a.Server, b.Server) })
	slices.SortStableFunc(r.Misses, func(a, b Miss) int {
		return cmp.Or(cmp.Compare(a.Scenario, b.Scenario), cmp.Compare(a.Server, b.Server), cmp.Compare(a.RunIndex, b.RunIndex), cmp.Compare(a.Turn, b.Turn))
	})
	Redact(r, in.Secrets)
	return r
}

// maxWarnedScenarios bounds the scenarios a warning names.
const maxWarnedScenarios = 8

// RepeatWarnings says which scenarios of res have fewer scored runs than
// asked (the methodology: "each scenario runs ≥5 times; report median and
// IQR"), and where pass@k was refused for it. Absent scenarios ask none.
func RepeatWarnings(res *Results, asked int) []string {
	if res == nil {
		return nil
	}
	type group struct {
		names    []string
		fewest   int
		refusedK int
	}
	byServer := map[string]*group{}
	for _, g := range res.Scenarios {
		if !g.UnderRun && !(g.KRefused && !g.Absent) {
			continue
		}
		gr := byServer[g.Server]
		if gr == nil {
			gr = &group{fewest: g.Runs}
			byServer[g.Server] = gr
		}
		gr.names = append(gr.names, g.Scenario)
		gr.fewest = min(gr.fewest, g.Runs)
		if g.KRefused {
			gr.refusedK = g.K
		}
	}
	var out []string
	for _, server := range sortedKeys(byServer) {
		gr := byServer[server]
		names := gr.names
		more := ""
		if len(names) > maxWarnedScenarios {
			more = fmt.Sprintf(" and %d more", len(names)-maxWarnedScenarios)
			names = names[:maxWarnedScenarios]
		}
		who := "server " + server
		if server == "" {
			who = "the runs"
		}
		w := fmt.Sprintf("%s: %d scenario(s) have fewer scored runs than the %d asked (fewest: %d): %s%s", who, len(gr.names), asked, gr.fewest, strings.Join(names, ", "), more)
		if gr.refusedK > 0 {
			w += fmt.Sprintf("; pass@%d and pass^%d are not computed for them", gr.refusedK, gr.refusedK)
		}
		out = append(out, w)
	}
	return out
}

// SchemaWarnings says which scenarios of res were scored without a result
// schema (manifests in the methodology's format have none): their
// task_success is every expect.api_calls endpoint called, and no answer was
// graded.
func SchemaWarnings(res *Results) []string {
	if res == nil {
		return nil
	}
	var names []string
	for _, g := range res.Scenarios {
		if g.NoResultSchema && !slices.Contains(names, g.Scenario) {
			names = append(names, g.Scenario)
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	n := len(names)
	more := ""
	if n > maxWarnedScenarios {
		more = fmt.Sprintf(" and %d more", n-maxWarnedScenarios)
		names = names[:maxWarnedScenarios]
	}
	return []string{fmt.Sprintf("%d scenario(s) have no result_schema: their task_success is decided by the API calls alone (every expect.api_calls endpoint called), the answer is not graded: %s%s", n, strings.Join(names, ", "), more)}
}

// ModelWarnings says, server by server, where the model failed in ways a
// run records but no metric names alone (methodology 1.9): the runs that
// ended in a loop or cut by the max-tokens limit (failed tasks, never
// errors), and the malformed calls and calls of tools the server does not
// have (each answered with an error; they count in invalid_calls).
func ModelWarnings(res *Results) []string {
	if res == nil {
		return nil
	}
	type at struct {
		scenario, model string
		run             int
	}
	type group struct {
		loops, cut, calls  []at
		malformed, unknown int
		models             map[string]bool
	}
	byServer := map[string]*group{}
	for _, g := range res.Scenarios {
		for _, r := range g.summaries() {
			if r.stale || r.recordedError {
				continue
			}
			gr := byServer[g.Server]
			if gr == nil {
				gr = &group{models: map[string]bool{}}
				byServer[g.Server] = gr
			}
			gr.models[r.model] = true
			where := at{g.Scenario, r.model, r.runIndex}
			switch r.outcome {
			case traces.OutcomeLoop:
				gr.loops = append(gr.loops, where)
			case traces.OutcomeMaxTokens:
				gr.cut = append(gr.cut, where)
			}
			if r.malformed+r.unknownTool > 0 {
				gr.calls = append(gr.calls, where)
				gr.malformed += r.malformed
				gr.unknown += r.unknownTool
			}
		}
	}
	var out []string
	for _, server := range sortedKeys(byServer) {
		gr := byServer[server]
		// "scenario #run", and the model when the server's runs are of
		// several.
		list := func(ats []at) string {
			var names []string
			for _, a := range ats {
				s := fmt.Sprintf("%s #%d", a.scenario, a.run)
				if len(gr.models) > 1 {
					s += " (" + a.model + ")"
				}
				names = append(names, s)
			}
			if len(names) > maxWarnedScenarios {
				return strings.Join(names[:maxWarnedScenarios], ", ") + fmt.Sprintf(" and %d more", len(names)-maxWarnedScenarios)
			}
			return strings.Join(names, ", ")
		}
		who := "server " + server
		if server == "" {
			who = "the runs"
		}
		if n := len(gr.loops); n > 0 {
			out = append(out, fmt.Sprintf("%s: %d run(s) ended in a loop, the model making the same call %d times in a row (outcome loop: the task failed): %s", who, n, traces.LoopCalls, list(gr.loops)))
		}
		if n := len(gr.cut); n > 0 {
			out = append(out, fmt.Sprintf("%s: %d run(s) ended with the model's output cut by the max-tokens limit (outcome max_tokens: the task failed; bench record --max-tokens sets the limit): %s", who, n, list(gr.cut)))
		}
		if n := len(gr.calls); n > 0 {
			out = append(out, fmt.Sprintf("%s: the model made %d malformed call(s) (naming no tool, or arguments that are not a JSON object) and %d call(s) of a tool the server does not have, in %d run(s), each answered with an error (they count in invalid_calls): %s", who, gr.malformed, gr.unknown, n, list(gr.calls)))
		}
	}
	return out
}

// Runs returns every run's metrics in the report, in report order.
func (r *Report) Runs() []*RunMetrics {
	var out []*RunMetrics
	if r.Results == nil {
		return nil
	}
	for _, s := range r.Results.Scenarios {
		out = append(out, s.RunMetrics...)
	}
	return out
}

// WriteJSON writes the report as indented JSON with a final newline: the
// bytes of json.MarshalIndent(r, "", "  ") and a newline. The results'
// scenario and suite entries, which grow with the runs (each scenario
// holds its runs' metrics), are encoded a few at a time, on every core,
// and written in order, so the document is never held whole in memory;
// the rest of the report is encoded meanwhile. An encoding error may
// leave part of the report written.
func WriteJSON(w io.Writer, r *Report) error {
	if r.Results == nil {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding report: %w", err)
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	// Everything but the results, with empty results in their place: one
	// member at the top level holds "results", so the stub is found once.
	type encoded struct {
		b   []byte
		err error
	}
	headc := make(chan encoded, 1)
	go func() {
		head := *r
		head.Results = &Results{}
		b, err := json.MarshalIndent(&head, "", "  ")
		headc <- encoded{b, err}
	}()
	var b []byte
	var at int
	bw := bufio.NewWriterSize(w, 64<<10)
	writeHead := func() error {
		h := <-headc
		if h.err != nil {
			return fmt.Errorf("encoding report: %w", h.err)
		}
		if b, at = h.b, bytes.Index(h.b, []byte(resultsStub)); at < 0 {
			return fmt.Errorf("encoding report: no results member")
		}
		bw.Write(b[:at+len(resultsKey)])
		bw.WriteString("{\n    \"scenarios\": ")
		return nil
	}
	if err := writeJSONArray(bw, r.Results.Scenarios, "      ", writeHead); err != nil {
		return err
	}
	bw.WriteString(",\n    \"suites\": ")
	if err := writeJSONArray(bw, r.Results.Suites, "      ", nil); err != nil {
		return err
	}
	bw.WriteString("\n  }")
	bw.Write(b[at+len(resultsStub):])
	bw.WriteByte('\n')
	return bw.Flush()
}

// resultsKey and resultsStub are the results member of an indented report
// and its value when Results is empty.
const (
	resultsKey  = "\n  \"results\": "
	resultsStub = resultsKey + "{\n    \"scenarios\": null,\n    \"suites\": null\n  }"
)

// writeJSONArray writes xs as json.MarshalIndent writes it inside a
// document, its elements at indentation prefix: a window of elements is
// encoded on every core, then written in order, then the next. before,
// when not nil, is called once before anything is written (while the
// first window is encoded).
func writeJSONArray[T any](w *bufio.Writer, xs []T, prefix string, before func() error) error {
	if before == nil {
		before = func() error { return nil }
	}
	if len(xs) == 0 {
		if err := before(); err != nil {
			return err
		}
		empty := "[]"
		if xs == nil {
			empty = "null"
		}
		_, err := w.WriteString(empty)
		return err
	}
	window := make([]bytes.Buffer, min(len(xs), 4*runtime.GOMAXPROCS(0)))
	errs := make([]error, len(window))
	for lo := 0; lo < len(xs); lo += len(window) {
		hi := min(len(xs), lo+len(window))
		cores.Each(hi-lo, func(j int) {
			window[j].Reset()
			errs[j] = indentElement(&window[j], xs[lo+j], prefix)
		})
		if lo == 0 {
			if err := before(); err != nil {
				return err
			}
			w.WriteByte('[')
		}
		for j := range hi - lo {
			if errs[j] != nil {
				return fmt.Errorf("encoding report: %w", errs[j])
			}
			if lo+j > 0 {
				w.WriteByte(',')
			}
			w.WriteByte('\n')
			w.WriteString(prefix)
			if _, err := w.Write(window[j].Bytes()); err != nil {
				return err
			}
		}
	}
	w.WriteByte('\n')
	w.WriteString(prefix[:len(prefix)-2])
	_, err := w.WriteString("]")
	return err
}

// indentElement appends to buf what json.MarshalIndent(x, prefix, "  ")
// returns. A value with its own MarshalJSON (a scenario's or a suite's
// result) is indented from what that returns: json.Marshal would first
// re-scan and compact it, a copy as large as the report for nothing
// (json.Marshal's output has no space to remove and its strings are
// already escaped).
func indentElement(buf *bytes.Buffer, x any, prefix string) error {
	if m, ok := x.(json.Marshaler); ok {
		if v := reflect.ValueOf(x); v.Kind() != reflect.Pointer || !v.IsNil() {
			raw, err := m.MarshalJSON()
			if err != nil {
				return err
			}
			return json.Indent(buf, raw, prefix, "  ")
		}
	}
	b, err := json.MarshalIndent(x, prefix, "  ")
	buf.Write(b)
	return err
}

// MaxReportBytes bounds a JSON report ReadReport reads (a baseline may
// come from an artifact).
const MaxReportBytes = 256 << 20

// ReadReport reads a JSON report, refusing unknown format versions and
// reports over MaxReportBytes.
func ReadReport(rd io.Reader) (*Report, error) {
	var r Report
	if err := json.NewDecoder(bounded.Reader(rd, MaxReportBytes, "report")).Decode(&r); err != nil {
		return nil, fmt.Errorf("reading report: %w", err)
	}
	// Format 1 wrote 0 where format 2 writes null; format 3 renamed the
	// parameter metrics (RunMetrics reads the old names).
	if r.Format < 1 || r.Format > ReportFormat {
		return nil, fmt.Errorf("report format %d: this bench reads formats 1 to %d", r.Format, ReportFormat)
	}
	if r.Results == nil {
		return nil, fmt.Errorf("reading report: no results")
	}
	return &r, nil
}

// maxFoldedNames bounds the scenarios a folded miss names.
const maxFoldedNames = 8

// FoldMisses folds misses explained alike (same turn, same explanation)
// into the first of them, in report order, which then says where else it
// was seen: a pull request that changes a tool description misses every
// run at turn 0 the same way, and the report (a PR comment) should say so
// once.
func FoldMisses(rows []Miss) []Miss {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b Miss) int {
		return cmp.Or(cmp.Compare(a.Scenario, b.Scenario), cmp.Compare(a.Server, b.Server), cmp.Compare(a.RunIndex, b.RunIndex), cmp.Compare(a.Turn, b.Turn))
	})
	type group struct {
		first     int
		runs      int
		scenarios []string
	}
	groups := map[string]*group{}
	var order []string
	for i, m := range rows {
		k := fmt.Sprintf("%d\x00%s\x00%s", m.Turn, m.Server, m.Explanation)
		g := groups[k]
		if g == nil {
			g = &group{first: i}
			groups[k] = g
			order = append(order, k)
		}
		g.runs++
		if !slices.Contains(g.scenarios, m.Scenario) {
			g.scenarios = append(g.scenarios, m.Scenario)
		}
	}
	out := make([]Miss, 0, len(order))
	for _, k := range order {
		g := groups[k]
		m := rows[g.first]
		if g.runs > 1 {
			names := g.scenarios
			more := ""
			if len(names) > maxFoldedNames {
				more = fmt.Sprintf(" and %d more", len(names)-maxFoldedNames)
				names = names[:maxFoldedNames]
			}
			m.Explanation += fmt.Sprintf("\n  (the same miss in %d runs of %d scenario(s): %s%s)", g.runs, len(g.scenarios), strings.Join(names, ", "), more)
		}
		out = append(out, m)
	}
	return out
}

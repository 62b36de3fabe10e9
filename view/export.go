package view

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"github.com/mcpbench/bench/internal/atomicfile"
	"github.com/mcpbench/bench/scoring"
)

// ExportOptions say what Export writes.
type ExportOptions struct {
	// Query selects the runs (paging ignored).
	Query Query
	// MaskLeaks publishes a run in which a server or a model said a canary
	// (a tool result, an answer, a model's message), the canary masked.
	// Without it Export refuses such a run: a leak is the server's
	// behaviour, and its transcript is not for publishing unasked.
	MaskLeaks bool
}

// ExportReport says what Export wrote.
type ExportReport struct {
	Dir   string
	Runs  int
	Files int
	Bytes int64
}

// LeakError is Export's refusal: each finding names the run, the field
// of what the bundle would publish and what was found in it.
type LeakError struct {
	Findings []string
}

func (e *LeakError) Error() string {
	const most = 10
	list := e.Findings
	more := ""
	if len(list) > most {
		more = fmt.Sprintf("\n  ... and %d more", len(list)-most)
		list = list[:most]
	}
	return fmt.Sprintf("the bundle would publish %d secret(s); nothing written:\n  %s%s", len(e.Findings), strings.Join(list, "\n  "), more)
}

// credentials are the shapes of values that are credentials wherever
// they appear: the providers' key formats, private keys, tokens. Each
// pattern runs only on a string holding one of its marks (a plain
// substring search), which most strings do not.
var credentials = []struct {
	what  string
	marks []string
	re    *regexp.Regexp
}{
	{"a private key", []string{"PRIVATE KEY"}, regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`)},
	{"an API key (sk-...)", []string{"sk-"}, regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`)},
	{"a GitHub token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,})`)},
	{"an AWS access key", []string{"AKIA", "ASIA"}, regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{"a Slack token", []string{"xox"}, regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},
	{"a Google API key", []string{"AIza"}, regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)},
	{"a JSON Web Token", []string{"eyJ"}, regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`)},
	{"a bearer token", []string{"earer", "EARER"}, regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/-]{20,}`)},
}

// credential returns what s looks like a credential of, or "".
func credential(s string) string {
	for _, c := range credentials {
		for _, m := range c.marks {
			if strings.Contains(s, m) {
				if c.re.MatchString(s) {
					return c.what
				}
				break
			}
		}
	}
	return ""
}

// Export writes a bundle of the runs o.Query selects into dir: the page,
// and its data as JavaScript files (data/index.js, data/board.js, one
// data/run-<ID>.js per run) that the page loads with script elements, so
// that it works opened from disk. It refuses, writing nothing, when what
// it would publish holds a canary or a value that looks like a
// credential; a directory that holds anything but an earlier bundle is
// refused too.
func (v *View) Export(dir string, o *ExportOptions) (*ExportReport, error) {
	if o == nil {
		o = &ExportOptions{}
	}
	if err := checkBundleDir(dir); err != nil {
		return nil, err
	}
	ix := v.cur()
	sel := v.selectRows(ix, o.Query)
	if len(sel) == 0 {
		return nil, errors.New("the selection holds no run")
	}
	files := map[string][]byte{}
	var leaks []string
	rows := make([]Row, 0, len(sel))
	for _, i := range sel {
		row := ix.rows[i]
		run, err := ix.store.GetRun(row.id)
		if err != nil {
			return nil, err
		}
		m, err := v.score(run)
		if err != nil {
			m = nil
		}
		t := v.timeline(run, row.Ref, m)
		if run.Manifest.Replays != nil {
			t.Replay = v.replayOf(ix.store, run)
			// The page links the recording only when the bundle holds it.
			j, ok := ix.byID[*run.Manifest.Replays]
			t.Replay.Recording = t.Replay.Recording && ok && inSel(sel, j)
		}
		if j, ok := ix.byName["replay/"+row.Ref]; ok && inSel(sel, j) {
			t.ReplayedAs = ix.rows[j].ID
		}
		if t.Judgements, err = v.judgements(ix, row.Ref, row.id); err != nil {
			return nil, err
		}
		// What a server or a model said is published as said: a canary
		// there is a leak. The fake's HTTP bodies are its fixture, which
		// holds the canaries by design: masked.
		secrets := v.secrets()
		if !o.MaskLeaks {
			walkStrings(reflect.ValueOf(t), "", func(path, s string) {
				if isFixtureData(path) {
					return
				}
				for _, sec := range secrets {
					if sec != "" && strings.Contains(s, sec) {
						leaks = append(leaks, fmt.Sprintf("run %s: %s holds the canary %s", row.Ref, describe(t, path), redactShort(sec)))
					}
				}
			})
		}
		v.maskAll(t)
		walkStrings(reflect.ValueOf(t), "", func(path, s string) {
			for _, sec := range secrets {
				if sec != "" && strings.Contains(s, sec) && (o.MaskLeaks || isFixtureData(path)) {
					leaks = append(leaks, fmt.Sprintf("run %s: %s holds the canary %s (masking is off)", row.Ref, describe(t, path), redactShort(sec)))
				}
			}
			if what := credential(s); what != "" {
				leaks = append(leaks, fmt.Sprintf("run %s: %s holds what looks like %s", row.Ref, describe(t, path), what))
			}
		})
		b, err := dataFile("run-"+t.ID, t)
		if err != nil {
			return nil, err
		}
		files["data/run-"+t.ID+".js"] = b
		row.Summary = v.summary(ix.store, row.id)
		rows = append(rows, row)
	}
	if len(leaks) > 0 {
		return nil, &LeakError{Findings: leaks}
	}
	idx := struct {
		Rows   []Row  `json:"rows"`
		Facets Facets `json:"facets"`
	}{rows, facetsOf(rows)}
	b, err := dataFile("index", idx)
	if err != nil {
		return nil, err
	}
	files["data/index.js"] = b
	if v.opts.Scorer != nil {
		q := o.Query
		q.Offset, q.Limit = 0, 0
		board, err := v.Board(q)
		if err != nil {
			return nil, err
		}
		if files["data/board.js"], err = dataFile("board", board); err != nil {
			return nil, err
		}
	}
	var pg bytes.Buffer
	if err := page(&pg, true); err != nil {
		return nil, err
	}
	files["index.html"] = pg.Bytes()
	for _, name := range []string{"app.js", "app.css"} {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			return nil, err
		}
		files[name] = b
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	if old, _ := filepath.Glob(filepath.Join(dir, "data", "*.js")); len(old) > 0 {
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				return nil, err
			}
		}
	}
	rep := &ExportReport{Dir: dir, Runs: len(rows)}
	for _, name := range sortedKeys(files) {
		if err := atomicfile.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), files[name], 0o644); err != nil {
			return nil, err
		}
		rep.Files++
		rep.Bytes += int64(len(files[name]))
	}
	return rep, nil
}

// checkBundleDir refuses a directory that holds anything but an earlier
// bundle (its index.html, app.js, app.css and data/).
func checkBundleDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		switch e.Name() {
		case "index.html", "app.js", "app.css", "data":
			continue
		}
		return fmt.Errorf("--export %s: the directory holds %s, which is not part of a bundle; export into an empty directory", dir, e.Name())
	}
	if len(entries) > 0 {
		b, err := os.ReadFile(filepath.Join(dir, "index.html"))
		if err != nil || !bytes.Contains(b, []byte(`data-bundle="1"`)) {
			return fmt.Errorf("--export %s: the directory is not empty and holds no bundle of bench view", dir)
		}
	}
	return nil
}

func inSel(sel []int, j int) bool {
	for _, i := range sel {
		if i == j {
			return true
		}
	}
	return false
}

// dataFile is the JavaScript of a bundle's data file: one call of
// benchData with the value as JSON (encoding/json writes <, > and & as
// \u003c..., so nothing in it ends a script).
func dataFile(name string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", name, err)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "benchData(%q, ", name)
	out.Write(b)
	out.WriteString(");\n")
	return out.Bytes(), nil
}

// isFixtureData reports whether a timeline field holds what the fake
// Central served or was sent (HTTP bodies), not what a server or a model
// said to the other.
func isFixtureData(path string) bool { return strings.Contains(path, ".http[") }

// describe names a field of a timeline for a person: its JSON path and
// what it is ("items[4].result: the result of tool call 1, get_wlan").
func describe(t *Timeline, path string) string {
	var i int
	if _, err := fmt.Sscanf(path, "items[%d]", &i); err == nil && i < len(t.Items) {
		it := t.Items[i]
		switch it.Kind {
		case "call":
			return fmt.Sprintf("%s (tool call %d, %s)", path, it.Index, it.Tool)
		case "turn":
			return fmt.Sprintf("%s (model turn %d)", path, it.Index)
		}
	}
	return path
}

func redactShort(s string) string {
	x := struct{ S string }{s}
	scoring.Redact(&x, []string{s})
	return x.S
}

// walkStrings calls fn with the JSON path and value of every string
// reachable from v (the view's own types: structs, slices, pointers).
func walkStrings(v reflect.Value, path string, fn func(path, s string)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkStrings(v.Elem(), path, fn)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			walkStrings(v.Field(i), p, fn)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkStrings(v.Index(i), fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case reflect.String:
		if s := v.String(); s != "" {
			fn(path, s)
		}
	}
}

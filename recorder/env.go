package recorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/mcpbench/bench/traces"
)

// baseEnv lists the variables of the caller's environment that every
// server inherits, besides LC_*: what a shell's programs, Python (a venv,
// pyenv) and Node (npm, npx) need to start, and Go's own (the reference
// profile runs `go run`). Nothing in it is a credential; everything else
// in the caller's environment stays out unless the profile's pass_env or
// a --pass-env flag names it.
var baseEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TMPDIR",
	"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
	"VIRTUAL_ENV", "PYENV_ROOT", "PYENV_VERSION",
	"GOROOT", "GOPATH", "GOCACHE", "GOMODCACHE", "GOENV", "GOFLAGS", "GOTOOLCHAIN",
}

// BaseEnv returns the names of the variables every server inherits from
// the caller's environment, in the order documented (LC_* last, as a
// pattern).
func BaseEnv() []string {
	return append(slices.Clone(baseEnv), "LC_*")
}

func inBase(name string) bool {
	return strings.HasPrefix(name, "LC_") || slices.Contains(baseEnv, name)
}

// fakeOwned reports whether the fake Central sets name itself (proxies,
// CA bundles) or bench reserves it: such a variable is never taken from
// the caller's environment, even when named.
func fakeOwned(name string) bool {
	u := strings.ToUpper(name)
	switch u {
	case "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "CURL_CA_BUNDLE":
		return true
	}
	return strings.HasSuffix(u, "_PROXY") || strings.HasPrefix(u, "FAKECENTRAL_")
}

// CheckPassEnv checks the names of variables to pass to a server (a
// profile's pass_env, a --pass-env flag): each must be a variable name,
// and none may be one the fake Central sets (proxies, CA bundles,
// FAKECENTRAL_*). The error names the first offenders.
func CheckPassEnv(names []string) error {
	var errs []error
	for _, n := range names {
		switch {
		case !isIdent(n):
			errs = append(errs, fmt.Errorf("%q is not a variable name (letters, digits and _)", n))
		case fakeOwned(n):
			errs = append(errs, fmt.Errorf("%s: the fake Central sets the proxy and CA variables itself; set it in the profile's env if the server needs another value", n))
		}
	}
	return errors.Join(errs...)
}

// ChildEnv returns what a server inherits of environ (the caller's
// environment, os.Environ in the CLI): the variables of BaseEnv, and those
// pass names, in environ's order. Nothing else of environ reaches the
// server: no credential, whatever its name, and no proxy or CA setting
// (the fake Central provides its own; see CheckPassEnv). The fake's
// variables and the profile's env are added after it.
func ChildEnv(environ, pass []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if passed(k, pass) {
			out = append(out, kv)
		}
	}
	return out
}

func passed(name string, pass []string) bool {
	if fakeOwned(name) {
		return false
	}
	return inBase(name) || slices.Contains(pass, name)
}

// MinRedactLen is the length a value of the caller's environment must
// exceed to be redacted from what a server wrote: shorter values (1,
// true, C.UTF-8) are words, not secrets, and would redact innocent text.
const MinRedactLen = 8

// withheldValue is a value of the caller's environment that the server
// was not given, with the placeholder that replaces it in a trace.
type withheldValue struct {
	name, value string
	// forms are the value as it is and as it appears inside a JSON string
	// (escaped, and with <, > and & escaped as well, as Go's encoder does).
	forms       []string
	core        string // the longest part of value that no JSON encoder escapes
	placeholder string
}

// RedactedPlaceholder is what replaces the value of the caller's variable
// name in a trace: [redacted:NAME].
func RedactedPlaceholder(name string) string {
	if !isIdent(name) {
		return "[redacted]"
	}
	return "[redacted:" + name + "]"
}

// withheld lists the values of environ longer than MinRedactLen whose
// variable the server did not inherit (not in the base, not passed), and
// that no variable of the server's own environment child holds, whole or
// in part (what it was given, such as NO_PROXY's value or the directory
// TMPDIR is in, is no secret from its trace, and redacting it would
// mangle the paths it prints). Longest first, so a value that contains
// another is replaced whole.
func withheld(environ, pass, child []string) []withheldValue {
	var given []string
	for _, kv := range child {
		_, v, _ := strings.Cut(kv, "=")
		given = append(given, v)
	}
	inGiven := func(v string) bool {
		return slices.ContainsFunc(given, func(g string) bool { return strings.Contains(g, v) })
	}
	seen := map[string]bool{}
	var out []withheldValue
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if len(v) <= MinRedactLen || passed(k, pass) || seen[v] || inGiven(v) {
			continue
		}
		seen[v] = true
		forms := []string{v}
		for _, f := range []string{jsonEscaped(v, false), jsonEscaped(v, true)} {
			if !slices.Contains(forms, f) {
				forms = append(forms, f)
			}
		}
		out = append(out, withheldValue{name: k, value: v, forms: forms, core: plainCore(v), placeholder: RedactedPlaceholder(k)})
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].value) > len(out[j].value) })
	return out
}

// jsonEscaped is s as it appears between the quotes of a JSON string.
func jsonEscaped(s string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	enc.Encode(s)
	q := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return string(q[1 : len(q)-1])
}

// plainCore returns the longest run of s's bytes that JSON encoders write
// as they are (printable ASCII but " \ < > &): every encoded form of s,
// however deep in JSON, holds it.
func plainCore(s string) string {
	best, start := "", 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || !plainByte(s[i]) {
			if i-start > len(best) {
				best = s[start:i]
			}
			start = i + 1
		}
	}
	return best
}

func plainByte(c byte) bool {
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// in reports whether b may hold w in some form: its plain core (or, for
// a value with no plain byte, one of its forms) is in b.
func (w *withheldValue) in(b []byte) bool {
	if len(w.core) > 0 {
		return bytes.Contains(b, []byte(w.core))
	}
	for _, f := range w.forms {
		if bytes.Contains(b, []byte(f)) {
			return true
		}
	}
	return false
}

// inText reports whether s holds one of w's forms.
func (w *withheldValue) inText(s string) bool {
	for _, f := range w.forms {
		if strings.Contains(s, f) {
			return true
		}
	}
	return false
}

// serverWords returns what the server wrote into a run, field by field:
// its stderr, its handshake, its tool list, its tool results, its
// elicitations, the requests it sent to Central and the errors that quote
// it; texts as they are, JSON as JSON. The model's turns and bench's own
// fields are not in it.
func serverWords(run *traces.Run) (texts []string, raws []json.RawMessage) {
	add := func(ss ...string) {
		for _, s := range ss {
			if s != "" {
				texts = append(texts, s)
			}
		}
	}
	addRaw := func(rs ...json.RawMessage) {
		for _, r := range rs {
			if len(r) > 0 {
				raws = append(raws, r)
			}
		}
	}
	for _, e := range run.Events {
		if i := e.Initialize; i != nil {
			add(i.Stderr, i.Instructions)
			addRaw(i.ServerInfo, i.Capabilities)
		}
		if t := e.Tools; t != nil {
			addRaw(t.Tools)
		}
		if c := e.Call; c != nil {
			addRaw(c.Result)
		}
		if el := e.Elicitation; el != nil {
			add(el.Message)
			addRaw(el.Schema)
		}
		if h := e.HTTP; h != nil {
			add(h.Path, h.Query)
			addRaw(h.RequestBody)
		}
		if g := e.Egress; g != nil {
			add(g.Host)
		}
		if er := e.Error; er != nil {
			add(er.Message)
		}
	}
	return texts, raws
}

// inJSON reports whether the JSON text raw holds one of w's forms in a
// string or a key (a JSON document inside a string, as tool results
// often carry, included).
func (w *withheldValue) inJSON(raw []byte) bool {
	if !w.in(raw) {
		return false
	}
	if w.inText(string(raw)) {
		return true
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return false
	}
	found := false
	walkStrings(v, func(s string) string {
		found = found || w.inText(s)
		return s
	})
	return found
}

// scrubEnv replaces, in every event of run, each value of withheld that
// the server wrote somewhere (serverWords) with its placeholder: wherever
// the value went from there (the model's next request, its answer) it is
// replaced too. A run in which the server wrote none of them is returned
// as it is, so runs of servers that do not print the user's environment
// keep their IDs. The manifest, bench's own, is never changed.
func scrubEnv(run *traces.Run, values []withheldValue) *traces.Run {
	if len(values) == 0 {
		return run
	}
	texts, raws := serverWords(run)
	var found []withheldValue
	for _, w := range values {
		hit := slices.ContainsFunc(texts, w.inText)
		for _, r := range raws {
			if hit {
				break
			}
			hit = w.inJSON(r)
		}
		if hit {
			found = append(found, w)
		}
	}
	if len(found) == 0 {
		return run
	}
	var pairs []string
	for _, w := range found {
		for _, f := range w.forms {
			pairs = append(pairs, f, w.placeholder)
		}
	}
	rep := strings.NewReplacer(pairs...)
	out := &traces.Run{Manifest: run.Manifest, Events: make([]traces.Event, len(run.Events))}
	for i, e := range run.Events {
		out.Events[i] = scrubEvent(e, rep, found)
	}
	return out
}

// redact replaces the values of withheld in s.
func redact(s string, values []withheldValue) string {
	for _, w := range values {
		for _, f := range w.forms {
			s = strings.ReplaceAll(s, f, w.placeholder)
		}
	}
	return s
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// scrubEvent returns e with rep applied to every string of its payload:
// string fields as they are, JSON fields string by string (keys too) after
// decoding, so a replacement never breaks an escape sequence. The run e
// belongs to is not changed.
func scrubEvent(e traces.Event, rep *strings.Replacer, found []withheldValue) traces.Event {
	v := reflect.ValueOf(&e).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() != reflect.Pointer || f.IsNil() || f.Elem().Kind() != reflect.Struct {
			continue
		}
		cp := reflect.New(f.Elem().Type())
		cp.Elem().Set(f.Elem())
		s := cp.Elem()
		changed := false
		for j := range s.NumField() {
			g := s.Field(j)
			switch {
			case g.Type() == rawMessageType && g.Len() > 0:
				if r, ok := scrubJSON(g.Bytes(), rep, found); ok {
					g.SetBytes(r)
					changed = true
				}
			case g.Kind() == reflect.String:
				if r := rep.Replace(g.String()); r != g.String() {
					g.SetString(r)
					changed = true
				}
			}
		}
		if changed {
			f.Set(cp)
		}
	}
	return e
}

// scrubJSON applies rep to the strings and keys of the JSON text raw and
// returns it in canonical form. It reports false when nothing changed.
func scrubJSON(raw []byte, rep *strings.Replacer, found []withheldValue) ([]byte, bool) {
	if !slices.ContainsFunc(found, func(w withheldValue) bool { return w.in(raw) }) {
		return nil, false
	}
	v, err := decodeJSON(raw)
	if err != nil {
		// Not JSON (a trace's JSON fields always are): the bytes, then.
		out := rep.Replace(string(raw))
		return []byte(out), out != string(raw)
	}
	changed := false
	v = walkStrings(v, func(s string) string {
		r := rep.Replace(s)
		changed = changed || r != s
		return r
	})
	if !changed {
		return nil, false
	}
	b, err := traces.Marshal(v)
	if err != nil {
		return nil, false
	}
	return b, true
}

func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// walkStrings returns v with f applied to every string and object key.
func walkStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case string:
		return f(x)
	case []any:
		for i := range x {
			x[i] = walkStrings(x[i], f)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[f(k)] = walkStrings(val, f)
		}
		return out
	}
	return v
}

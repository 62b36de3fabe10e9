package recorder

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/mcpbench/bench/internal/bounded"
	"github.com/mcpbench/bench/scenarios"
)

// ProfileFormat is the version of the servers/*.yaml profile format. A
// profile may say `format: 1`; no other value is accepted.
const ProfileFormat = 1

// DefaultProtocolVersion is the MCP protocol version the client asks for
// unless a profile says otherwise: the newest one every compared server
// speaks, and the one that keeps traces small (no per-request _meta).
const DefaultProtocolVersion = "2025-11-25"

// DefaultStartTimeout bounds a server's start-up when a profile sets none.
const DefaultStartTimeout = 60 * time.Second

// Transports a profile may name.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// Profile says how to launch one MCP server against the fake Central.
// Field defaults are filled by the loader.
type Profile struct {
	Format    int    `yaml:"format" json:"format,omitempty"`
	Name      string `yaml:"name" json:"name"`
	Repo      string `yaml:"repo" json:"repo,omitempty"` // "local" or owner/name
	SHA       string `yaml:"sha" json:"sha,omitempty"`   // pinned commit of a compared server
	Transport string `yaml:"transport" json:"transport"` // stdio (default) | http
	// Command is the argv, never a shell string. Templated.
	Command []string `yaml:"command" json:"command"`
	// Cwd is the working directory, relative to the profile's own folder
	// (wherever bench runs from). Default ".".
	Cwd string `yaml:"cwd" json:"cwd,omitempty"`
	// Env is added to the child's environment. Values are templated.
	Env map[string]string `yaml:"env" json:"env,omitempty"`
	// PassEnv names variables of the user's environment the server
	// inherits beside the base ones (BaseEnv): nothing else of the user's
	// environment reaches it.
	PassEnv []string `yaml:"pass_env" json:"pass_env,omitempty"`
	// URL is the streamable HTTP endpoint (http transport). Templated.
	URL string `yaml:"url" json:"url,omitempty"`
	// Ready is a URL that answers 2xx once the server is ready (http
	// transport). Default: the server is ready when it completes the MCP
	// handshake. Templated.
	Ready string `yaml:"ready" json:"ready,omitempty"`
	// StartTimeout bounds launch plus handshake. Default DefaultStartTimeout.
	StartTimeout Duration `yaml:"start_timeout" json:"start_timeout,omitempty"`
	// WritesEnv is added to Env when a scenario's write gate is write or
	// destructive.
	WritesEnv map[string]string `yaml:"writes_env" json:"writes_env,omitempty"`
	// ProtocolVersion is the MCP version the client asks for. Default
	// DefaultProtocolVersion.
	ProtocolVersion string `yaml:"protocol_version" json:"protocol_version,omitempty"`
	// Adapter renames tools between the server and the model.
	Adapter Adapter `yaml:"adapter" json:"adapter,omitzero"`
	// Clock is how bench sets the server's clock: auto (the default, ""),
	// pinned or wall (docs/clock.md).
	Clock string `yaml:"clock" json:"clock,omitempty"`
	// Normalize are the rules that replace volatile text (the time a
	// server prints) before runs are hashed and requests keyed
	// (docs/clock.md).
	Normalize []NormalizeRule `yaml:"normalize" json:"normalize,omitempty"`
	// Expectations names a file of this server's expected tools and
	// parameter rules for scenarios defined elsewhere, relative to the
	// profile's folder (scenarios.Expectations). Scoring and the oracle
	// read it; it is not how the server is launched, so it stays out of
	// the profile's hash.
	Expectations string `yaml:"expectations" json:"-"`
	// InnerTools names the tool list (bench servers check --save-tools)
	// of the inner tools the routes reach, relative to the profile's
	// folder: their annotations say which a reads-only route takes. Like
	// Expectations, it is not how the server is launched.
	InnerTools string `yaml:"inner_tools" json:"-"`
	// VariantOf names the server the scenarios name when this profile is
	// another tool exposure of it (an extra profile: a router, a code
	// mode): the scenarios' expected tools and parameter rules for that
	// server apply to it, the oracle follows them, and reports still name
	// the profile. Recorded in each run's manifest.
	VariantOf string `yaml:"variant_of" json:"-"`
	// Catalog says how bench servers check lists inner tools that only
	// meta tools describe (Catalog); not how the server is launched.
	Catalog *Catalog `yaml:"catalog" json:"-"`

	// File is where the profile was read from; Dir is the directory that
	// relative paths (cwd) resolve against.
	File string `yaml:"-" json:"-"`
	Dir  string `yaml:"-" json:"-"`

	// The working directory and argv after ExpandEnv. They stay out of the
	// profile's hash: where a user installed a server is not part of how
	// it was launched.
	workDir string
	argv    []string
}

// ExpandEnv replaces ${NAME} in the profile's cwd and command with the
// user's environment, read through getenv (profiles of the compared
// servers point at the checkout the user installed, e.g.
// cwd: ${BENCH_SERVER_DIR_KARTHIK}). A variable that is unset or empty is
// an error that names it and the profile.
//
// Only variables a server may see expand: those every server inherits
// (BaseEnv), those named BENCH_* (bench's own, for profiles; bench reads
// no secret from such a name), and those the profile's pass_env or pass
// (the --pass-env flags) names. Anything else — an API key, say — is an
// error: expanding it would put the caller's secret in the server's argv,
// past the environment filter.
func (p *Profile) ExpandEnv(getenv func(string) string, pass []string) error {
	var missing, refused []string
	expand := func(s string) string {
		return os.Expand(s, func(name string) string {
			if !isIdent(name) {
				return "${" + name + "}" // not ours: a template such as {port} stays
			}
			if !expandable(name, p.PassEnv, pass) {
				refused = append(refused, name)
				return ""
			}
			v := getenv(name)
			if v == "" {
				missing = append(missing, name)
			}
			return v
		})
	}
	p.workDir = ""
	if strings.Contains(p.Cwd, "$") {
		p.workDir = expand(p.Cwd)
		if !filepath.IsAbs(p.workDir) {
			p.workDir = filepath.Join(p.Dir, p.workDir)
		}
	}
	p.argv = nil
	for _, a := range p.Command {
		p.argv = append(p.argv, expand(a))
	}
	if len(refused) > 0 {
		slices.Sort(refused)
		refused = slices.Compact(refused)
		p.argv, p.workDir = nil, ""
		return fmt.Errorf("%s: cwd or command uses ${%s}, which servers may not see: only the variables every server inherits, BENCH_* and those the profile's pass_env or --pass-env names expand in a profile (name it in pass_env if the server needs it)",
			p.File, strings.Join(refused, "}, ${"))
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		missing = slices.Compact(missing)
		return fmt.Errorf("%s: %s not set: install the server beside the project and export %s with its directory (docs/compared-servers.md)",
			p.File, strings.Join(missing, ", "), strings.Join(missing, " and "))
	}
	return nil
}

// expandable reports whether ${name} may expand in a profile.
func expandable(name string, passEnv, pass []string) bool {
	return inBase(name) || strings.HasPrefix(name, "BENCH_") || slices.Contains(passEnv, name) || slices.Contains(pass, name)
}

// Argv is the command after ExpandEnv (the command as written before it).
func (p *Profile) Argv() []string {
	if p.argv != nil {
		return p.argv
	}
	return p.Command
}

// Adapter is the published, documented translation between a server's tool
// surface and what the model sees.
type Adapter struct {
	// Rename maps a server's tool name to the name the model sees.
	Rename map[string]string `yaml:"rename" json:"rename,omitempty"`
	// Routes say how inner tools that are not in the tool list are
	// reached (a router tool, a code-mode block), in order of preference.
	// The model sees the server's tools unchanged; the oracle calls
	// through the first route offered.
	Routes []Route `yaml:"routes" json:"routes,omitempty"`
}

// Duration is a time.Duration written as "60s" in YAML and JSON.
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration such as 60s", n.Line, s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON parses a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration such as 60s", s)
	}
	*d = Duration(v)
	return nil
}

// MaxProfileBytes bounds a profile file (a pull request may change it).
const MaxProfileBytes = 4 << 20

// LoadProfile reads a profile. path is a servers/*.yaml file, or a JSON file
// in the "mcpServers" format MCP clients use; with several servers in it,
// name one as PATH#NAME.
func LoadProfile(path string) (*Profile, error) {
	file, name, _ := strings.Cut(path, "#")
	data, err := bounded.ReadFile(file, MaxProfileBytes)
	if err != nil {
		return nil, fmt.Errorf("reading server profile: %w", err)
	}
	p, err := ParseProfile(file, data, name)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	// Relative paths in a profile resolve against the profile's own
	// folder, wherever bench runs from.
	p.Dir = filepath.Dir(abs)
	return p, nil
}

// ParseProfile parses a profile. file names it in errors; name selects an
// entry of an "mcpServers" document (optional when it holds one server).
func ParseProfile(file string, data []byte, name string) (*Profile, error) {
	trimmed := bytes.TrimSpace(data)
	var p *Profile
	var err error
	if len(trimmed) > 0 && trimmed[0] == '{' {
		p, err = parseMCPServers(file, trimmed, name)
	} else {
		if name != "" {
			return nil, fmt.Errorf("%s: #%s selects an mcpServers entry, but this is a YAML profile", file, name)
		}
		p, err = parseYAMLProfile(file, data)
	}
	if err != nil {
		return nil, err
	}
	p.File = file
	if p.Dir == "" {
		p.Dir = filepath.Dir(file)
	}
	if err := p.fill(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return p, nil
}

func parseYAMLProfile(file string, data []byte) (*Profile, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	p := &Profile{}
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("%s: %s", file, profileYAMLError(err))
	}
	return p, nil
}

// unknownField is yaml.v3's message for a field a type does not have.
var unknownField = regexp.MustCompile(`^line (\d+): field (\S+) not found in type (\S+)$`)

// profileYAMLError says what is wrong with a profile in the profile's
// words: an unknown field with the known one nearest to it, never the Go
// type behind it.
func profileYAMLError(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	fields := yamlFields(reflect.TypeOf(Profile{}))
	var out []string
	for _, e := range te.Errors {
		m := unknownField.FindStringSubmatch(e)
		if m == nil {
			out = append(out, e)
			continue
		}
		msg := fmt.Sprintf("line %s: unknown field %q", m[1], m[2])
		if near := scenarios.Nearest(m[2], fields[m[3]], 1); len(near) > 0 {
			msg += fmt.Sprintf(" (did you mean %q?)", near[0])
		}
		if len(fields[m[3]]) > 0 {
			msg += " (known: " + strings.Join(fields[m[3]], ", ") + ")"
		}
		out = append(out, msg)
	}
	return strings.Join(out, "; ")
}

// yamlFields maps each struct type reachable from t, by the name yaml.v3
// prints for it, to its YAML field names, sorted.
func yamlFields(t reflect.Type) map[string][]string {
	out := map[string][]string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || out[t.String()] != nil {
			return
		}
		var names []string
		out[t.String()] = names
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			names = append(names, name)
			walk(f.Type)
		}
		slices.Sort(names)
		out[t.String()] = names
	}
	walk(t)
	return out
}

// mcpServer is one entry of the mcpServers JSON format (Claude Desktop,
// VS Code, Cursor). bench reads the fields that say how to launch.
type mcpServer struct {
	Type    string            `json:"type"` // stdio | http | streamable-http | sse
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Cwd     string            `json:"cwd"`
	URL     string            `json:"url"`
	// bench extensions; MCP clients ignore unknown fields.
	Ready        string            `json:"ready"`
	StartTimeout Duration          `json:"start_timeout"`
	WritesEnv    map[string]string `json:"writes_env"`
	Adapter      Adapter           `json:"adapter"`
	PassEnv      []string          `json:"pass_env"`
	Clock        string            `json:"clock"`
	Normalize    []NormalizeRule   `json:"normalize"`
}

func parseMCPServers(file string, data []byte, name string) (*Profile, error) {
	var doc struct {
		MCPServers map[string]mcpServer `json:"mcpServers"`
		Servers    map[string]mcpServer `json:"servers"` // VS Code's spelling
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	all := doc.MCPServers
	if len(all) == 0 {
		all = doc.Servers
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%s: no servers: want {\"mcpServers\": {\"NAME\": {\"command\": ..., \"args\": [...]}}}", file)
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	if name == "" {
		if len(all) > 1 {
			return nil, fmt.Errorf("%s holds %d servers (%s): name one as %s#NAME", file, len(all), strings.Join(names, ", "), file)
		}
		name = names[0]
	}
	e, ok := all[name]
	if !ok {
		return nil, fmt.Errorf("%s: no server %q (have %s)", file, name, strings.Join(names, ", "))
	}
	p := &Profile{Name: name, Repo: "local", Env: e.Env, Cwd: e.Cwd, URL: e.URL, Ready: e.Ready,
		StartTimeout: e.StartTimeout, WritesEnv: e.WritesEnv, Adapter: e.Adapter, PassEnv: e.PassEnv,
		Clock: e.Clock, Normalize: e.Normalize}
	switch e.Type {
	case "", "stdio":
		p.Transport = TransportStdio
	case "http", "streamable-http", "streamableHttp":
		p.Transport = TransportHTTP
	default:
		return nil, fmt.Errorf("%s: server %q: transport %q is not supported (stdio or http)", file, name, e.Type)
	}
	if e.Command != "" {
		p.Command = append([]string{e.Command}, e.Args...)
	}
	return p, nil
}

// checkName refuses a server name that is not one line of printable text:
// it names the server's runs and reports, and the store keys runs by it.
func checkName(name string) error {
	if len(name) > 200 {
		return fmt.Errorf("%d bytes, over 200", len(name))
	}
	if !utf8.ValidString(name) {
		return errors.New("not UTF-8")
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return fmt.Errorf("character %U not allowed (a control or bidi character)", r)
		}
	}
	return nil
}

// fill checks the profile and fills its defaults.
func (p *Profile) fill() error {
	var errs []error
	if p.Format != 0 && p.Format != ProfileFormat {
		errs = append(errs, fmt.Errorf("format %d: this bench reads profile format %d", p.Format, ProfileFormat))
	}
	if p.Name == "" {
		errs = append(errs, errors.New("name: required"))
	} else if err := checkName(p.Name); err != nil {
		errs = append(errs, fmt.Errorf("name: %w", err))
	}
	if p.Transport == "" {
		p.Transport = TransportStdio
	}
	switch p.Transport {
	case TransportStdio:
		if len(p.Command) == 0 {
			errs = append(errs, errors.New("command: required for the stdio transport (an argv list)"))
		}
	case TransportHTTP:
		if p.URL == "" {
			errs = append(errs, errors.New("url: required for the http transport"))
		}
	default:
		errs = append(errs, fmt.Errorf("transport: %q is not stdio or http", p.Transport))
	}
	if len(p.Command) > 0 && p.Command[0] == "" {
		errs = append(errs, errors.New("command[0]: empty program"))
	}
	if p.Cwd == "" {
		p.Cwd = "."
	}
	if p.StartTimeout <= 0 {
		p.StartTimeout = Duration(DefaultStartTimeout)
	}
	if p.ProtocolVersion == "" {
		p.ProtocolVersion = DefaultProtocolVersion
	}
	if err := CheckPassEnv(p.PassEnv); err != nil {
		errs = append(errs, fmt.Errorf("pass_env: %w", err))
	}
	seen := map[string]string{}
	for _, from := range sortedKeys(p.Adapter.Rename) {
		to := p.Adapter.Rename[from]
		if to == "" {
			errs = append(errs, fmt.Errorf("adapter.rename.%s: empty name", from))
		}
		if prev, dup := seen[to]; dup {
			errs = append(errs, fmt.Errorf("adapter.rename: %s and %s both become %s", prev, from, to))
		}
		seen[to] = from
	}
	if err := checkRoutes(p.Adapter.Routes); err != nil {
		errs = append(errs, err)
	}
	if err := p.Catalog.check(); err != nil {
		errs = append(errs, err)
	}
	for _, s := range append(append([]string{p.URL, p.Ready}, p.Command...), mapValues(p.Env)...) {
		if err := checkTemplate(s); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, checkClock(p.Clock), compileRules(p.Normalize))
	return errors.Join(errs...)
}

// Hash is the SHA-256 of the profile's launch-relevant content, for the
// manifest: two runs with the same hash launched the server the same way.
func (p *Profile) Hash() string {
	b, _ := json.Marshal(p) // struct fields in order; maps marshal sorted
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// WorkDir is the absolute working directory of the server.
func (p *Profile) WorkDir() string {
	if p.workDir != "" {
		return p.workDir
	}
	if filepath.IsAbs(p.Cwd) {
		return p.Cwd
	}
	return filepath.Join(p.Dir, p.Cwd)
}

// WriteGateVars lists the variables that open the server's write gate,
// sorted, as NAME=VALUE.
func (p *Profile) WriteGateVars() []string {
	var out []string
	for _, k := range sortedKeys(p.WritesEnv) {
		out = append(out, k+"="+p.WritesEnv[k])
	}
	return out
}

// Vars are the values of a profile's template variables for one launch.
type Vars struct {
	CentralURL string // {central_url}
	TokenURL   string // {token_url}
	ProxyURL   string // {proxy_url}
	CAFile     string // {ca_file}
	Port       int    // {port}
	Writes     bool   // {writes}: "1" or "0"
}

var templateNames = []string{"central_url", "token_url", "proxy_url", "ca_file", "port", "writes"}

// Expand replaces the template variables in s.
func (v Vars) Expand(s string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	w := "0"
	if v.Writes {
		w = "1"
	}
	return strings.NewReplacer(
		"{central_url}", v.CentralURL,
		"{token_url}", v.TokenURL,
		"{proxy_url}", v.ProxyURL,
		"{ca_file}", v.CAFile,
		"{port}", fmt.Sprint(v.Port),
		"{writes}", w,
	).Replace(s)
}

// checkTemplate rejects unknown {name} variables, so a typo fails at load
// time instead of reaching the server as a literal.
func checkTemplate(s string) error {
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			return nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return nil
		}
		name := s[i+1 : i+j]
		env := i > 0 && s[i-1] == '$' // ${NAME}: the user's environment (ExpandEnv)
		if !env && isIdent(name) && !slices.Contains(templateNames, name) {
			return fmt.Errorf("unknown template variable {%s} (known: {%s})", name, strings.Join(templateNames, "} {"))
		}
		s = s[i+j+1:]
	}
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// usesPort reports whether the profile asks for a {port}.
func (p *Profile) usesPort() bool {
	for _, s := range append(append([]string{p.URL, p.Ready}, p.Command...), mapValues(p.Env)...) {
		if strings.Contains(s, "{port}") {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, k := range sortedKeys(m) {
		out = append(out, m[k])
	}
	return out
}

// ExpectationsPath is Expectations resolved against the profile's folder,
// or "" when the profile names none.
func (p *Profile) ExpectationsPath() string { return p.resolve(p.Expectations) }

// InnerToolsPath is InnerTools resolved against the profile's folder, or ""
// when the profile names none.
func (p *Profile) InnerToolsPath() string { return p.resolve(p.InnerTools) }

// resolve returns a path the profile names, resolved against its folder.
func (p *Profile) resolve(path string) string {
	if path == "" || filepath.IsAbs(path) || p.Dir == "" {
		return path
	}
	return filepath.Join(p.Dir, path)
}

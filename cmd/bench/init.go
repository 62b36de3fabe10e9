package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/internal/atomicfile"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
)

type initOptions struct {
	name    string
	dir     string
	url     string
	from    string // an mcpServers JSON file[#NAME]
	command []string
	force   bool
	check   bool
}

func newInitCmd(a *app) *cobra.Command {
	opts := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init [--name NAME] (-- COMMAND [ARG...] | --from mcp.json[#NAME] | --url URL)",
		Short: "Start using bench in a server's repository: a profile, bench.yaml and a CI workflow",
		Long: `init, run at the root of an MCP server's repository, writes what bench needs
to benchmark that server:

  bench/server.yaml            the server profile: how to start it (the command
                               after --, an entry of an mcpServers JSON file, or
                               the URL of a server that is already listening) and
                               the variables that point it at bench's fake Central
  bench.yaml                   the stages (bench's built-in smoke, core and
                               safety), to edit
  .github/workflows/bench.yml  the per-pull-request workflow: the bench Action
                               replays the latest release's recording

It then runs bench servers check on the profile, which starts the server
against the fake Central and lists its tools, and prints the next commands.
A file that exists is left as it is unless --force is given. The transport
is stdio for a command, http for --url, and the entry's own for --from.

The profile's env block names the variables most Central servers read
(CENTRAL_BASE_URL and dummy client credentials); rename them to your
server's. Every server also gets HTTPS_PROXY and a CA bundle, through which
the Central API and SSO host names reach the fake even when the server has
them hard-coded (docs/adapters.md).`,
		Example: `  bench init -- python -m my_central_mcp
  bench init --name central --from .vscode/mcp.json#central
  bench init --url http://127.0.0.1:8000/mcp --name central`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.command = args
			return runInit(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.name, "name", "", "the server's name in traces and reports (default: from the command, the entry or the directory)")
	f.StringVar(&opts.dir, "dir", "bench", "folder of the profile")
	f.StringVar(&opts.url, "url", "", "the URL of a server that listens on HTTP (streamable HTTP)")
	f.StringVar(&opts.from, "from", "", "an mcpServers JSON file (Claude Desktop, VS Code, Cursor), FILE#NAME for one of several entries")
	f.BoolVar(&opts.force, "force", false, "overwrite files that exist")
	f.BoolVar(&opts.check, "check", true, "run bench servers check on the profile at the end")
	return cmd
}

// serverName is what a profile's name may be: it names refs and reports.
var serverName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

func runInit(ctx context.Context, a *app, opts *initOptions) error {
	given := 0
	for _, set := range []bool{len(opts.command) > 0, opts.from != "", opts.url != ""} {
		if set {
			given++
		}
	}
	if given != 1 {
		return usageErr(errors.New("init needs exactly one of: the server's command after --, --from mcp.json[#NAME], --url URL"))
	}
	profile, err := initProfile(opts)
	if err != nil {
		return usageErr(err)
	}
	stages := "# The stages bench replays (bench's built-in ones, written out to edit:\n" +
		"# a stage here replaces the built-in stage of its name; docs/scenarios.md).\n" +
		string(scenarios.BuiltinStages())
	profilePath := filepath.Join(opts.dir, "server.yaml")
	files := []struct{ path, body string }{
		{profilePath, profile},
		{"bench.yaml", stages},
		{filepath.Join(".github", "workflows", "bench.yml"), initWorkflow(filepath.ToSlash(profilePath))},
	}
	for _, f := range files {
		wrote, err := writeNew(f.path, f.body, opts.force)
		if err != nil {
			return setupErr(err)
		}
		if wrote {
			fmt.Fprintf(a.stdout, "wrote %s\n", f.path)
		} else {
			fmt.Fprintf(a.stdout, "kept  %s (it exists; --force overwrites it)\n", f.path)
		}
	}
	if opts.check {
		fmt.Fprintf(a.stdout, "\nbench servers check %s\n", profilePath)
		if err := runServersCheck(ctx, a, &serversCheckOptions{profile: profilePath, fixture: "site-a", isolation: recorder.IsolationAuto}); err != nil {
			fmt.Fprintf(a.stdout, "\nThe server did not start against the fake: edit %s (its command, cwd and env) and run bench servers check %s again.\n", profilePath, profilePath)
			return err
		}
	}
	fmt.Fprintf(a.stdout, `
Next:
  bench record --stage smoke --server %[1]s --model baseline
      offline; --model openai:MODEL (with OPENAI_API_KEY) records a real model
  bench replay --stage smoke --server %[1]s
      after a change: the recorded turns against your server, scored and gated
  bench report
      the scoreboard of what was recorded
On a release, record with a live model and attach the pack (docs/ci.md):
%[2]s then replays it on every pull request.
`, profilePath, filepath.ToSlash(filepath.Join(".github", "workflows", "bench.yml")))
	return nil
}

// initProfile writes the profile's YAML.
func initProfile(opts *initOptions) (string, error) {
	name := opts.name
	var b strings.Builder
	b.WriteString("# bench server profile, written by bench init (docs/adapters.md, docs/ci.md).\n")
	b.WriteString("# Relative paths resolve against this file's folder.\n")
	env := map[string]string{}
	switch {
	case opts.from != "":
		p, err := recorder.LoadProfile(opts.from)
		if err != nil {
			return "", err
		}
		if name == "" {
			name = strings.ToLower(p.Name)
		}
		fmt.Fprintf(&b, "name: %s\ntransport: %s\n", quoteYAML(name), p.Transport)
		if len(p.Command) > 0 {
			fmt.Fprintf(&b, "command: %s\n", yamlList(p.Command))
		}
		if p.URL != "" {
			fmt.Fprintf(&b, "url: %s\n", quoteYAML(p.URL))
		}
		cwd, err := filepath.Rel(opts.dir, filepath.Dir(opts.from))
		if err != nil || p.Cwd != "" && p.Cwd != "." {
			cwd = p.WorkDir()
		}
		fmt.Fprintf(&b, "cwd: %s\n", quoteYAML(filepath.ToSlash(cwd)))
		for k, v := range p.Env {
			env[k] = v
		}
	case opts.url != "":
		if name == "" {
			name = defaultName("")
		}
		fmt.Fprintf(&b, "name: %s\ntransport: http\nurl: %s\n", quoteYAML(name), quoteYAML(opts.url))
		b.WriteString("# bench does not start a server at a URL: start it yourself, pointed at the\n# fake (bench fake serve prints its address and variables).\n")
	default:
		if name == "" {
			name = defaultName(opts.command[0])
		}
		cwd, err := filepath.Rel(opts.dir, ".")
		if err != nil {
			cwd = "."
		}
		fmt.Fprintf(&b, "name: %s\ntransport: stdio\ncommand: %s\ncwd: %s\n", quoteYAML(name), yamlList(opts.command), quoteYAML(filepath.ToSlash(cwd)))
	}
	if !serverName.MatchString(name) {
		return "", fmt.Errorf("server name %q: want lower-case letters, digits, '.', '_' or '-' (--name NAME)", name)
	}
	b.WriteString("env:\n")
	b.WriteString("  # Point the server at bench's fake Central. Rename these to the variables\n")
	b.WriteString("  # your server reads. {central_url}, {token_url}, {proxy_url}, {ca_file} and\n")
	b.WriteString("  # {port} are filled in at each start; the credentials are dummies the fake accepts.\n")
	for _, kv := range [][2]string{{"CENTRAL_BASE_URL", "{central_url}"}, {"CENTRAL_CLIENT_ID", "bench"}, {"CENTRAL_CLIENT_SECRET", "bench-secret"}} {
		if _, ok := env[kv[0]]; !ok {
			env[kv[0]] = kv[1]
		}
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s: %s\n", k, quoteYAML(env[k]))
	}
	b.WriteString("# The variables that open the server's write gate in write scenarios, if it has one:\n")
	b.WriteString("writes_env: {}\n")
	b.WriteString("# Your server's expected tools and argument rules for bench's scenarios, in a\n")
	b.WriteString("# file beside this one, sharpen its score (docs/scenarios.md):\n")
	b.WriteString("# expectations: expectations.yaml\n")
	return b.String(), nil
}

// notNameChars are the runs of characters a server name may not hold.
var notNameChars = regexp.MustCompile(`[^a-z0-9._-]+`)

// defaultName derives a server name from its command, or the directory.
func defaultName(command string) string {
	base := filepath.Base(command)
	switch base {
	case "", ".", "python", "python3", "node", "npx", "uv", "uvx", "go", "java", "deno", "bun":
		wd, _ := os.Getwd()
		base = filepath.Base(wd)
	}
	base = strings.ToLower(strings.TrimSuffix(base, filepath.Ext(base)))
	base = notNameChars.ReplaceAllString(base, "-")
	return strings.Trim(base, "-._")
}

func yamlList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = quoteYAML(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// quoteYAML writes s as a double-quoted YAML scalar (JSON string syntax,
// which YAML reads).
func quoteYAML(s string) string { return strconv.Quote(s) }

// writeNew writes body to path unless it exists (and force is off), making
// its folder; the file is written whole and renamed into place (a symlink
// planted at path is replaced, not followed). It reports whether it wrote.
func writeNew(path, body string, force bool) (bool, error) {
	if _, err := os.Lstat(path); err == nil && !force {
		return false, nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	return true, atomicfile.WriteFile(path, []byte(body), 0o644)
}

// initWorkflow is the per-pull-request workflow bench init writes.
func initWorkflow(profile string) string {
	return `# The bench gate (docs/ci.md), written by bench init: on every pull request,
# replay the latest release's recording (bench.benchpack, attached by the
# release workflow in docs/ci.md) against this pull request's server.
name: bench
on:
  pull_request:
permissions:
  contents: read
jobs:
  gate:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          persist-credentials: false # the server under test runs in this job
      - id: bench
        uses: mcpbench/bench@v1
        with:
          profile: ` + profile + `
          stages: smoke
          pack: release
      - if: always()
        uses: actions/upload-artifact@v4
        with:
          name: bench-reports
          path: ${{ steps.bench.outputs.report-dir }}
`
}

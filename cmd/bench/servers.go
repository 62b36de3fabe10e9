package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/internal/atomicfile"
	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/scoring"
)

func newServersCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "servers",
		Short: "Work with server profiles (servers/*.yaml or an mcpServers JSON file)",
	}
	cmd.AddCommand(newServersCheckCmd(a))
	return cmd
}

type serversCheckOptions struct {
	profile   string
	fixture   string
	json      bool
	passEnv   []string
	isolation string
	writes    bool   // --writes: start it as write scenarios do
	saveTools string // --save-tools FILE
	as        string // --as NAME: the server's name in the tool list
}

func newServersCheckCmd(a *app) *cobra.Command {
	opts := &serversCheckOptions{}
	cmd := &cobra.Command{
		Use:   "check PROFILE",
		Short: "Start a server against the fake Central, list its tools and their token cost",
		Long: `check starts the server a profile describes against a fresh fake Central,
completes the MCP handshake, lists its tools (after the profile's adapter) and
prints the tool count, the size of the tool definitions in characters and in
tokens (` + recorder.Tokenizer + `, an embedded BPE vocabulary: no network), per
tool and for the server (each tool counted as a model request carries it: the
figure a stage's gate holds to tool_definition_tokens, and bench replay reports
per tool), the
variables that open its write gate, and any calls it made to Central while
starting. It exits 4 with the server's own message when the server cannot
start or list its tools.

PROFILE is a servers/*.yaml file or a JSON file in the "mcpServers" format
MCP clients use (FILE#NAME picks one of several servers).

--save-tools FILE writes the tool list, input schemas included, with the
profile's repo and SHA: bench scenarios lint --tools checks the scenarios'
expected tools and parameter rules against it. --as names the server the
list is for when that is not the profile's name (a router's inner tools,
listed by its direct-mode profile, are the router server's). A profile
whose inner tools only meta tools describe says how to list them
(catalog: {list, describe, name}; docs/adapters.md): check then lists them
too, and --save-tools writes them after the top-level tools.

` + serverEnvHelp,
		Example: `  bench servers check servers/reference.yaml
  bench servers check ~/.config/claude/claude_desktop_config.json#central
  bench servers check bench/server.yaml --save-tools bench/tools.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.profile = args[0]
			return runServersCheck(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.fixture, "fixture", "site-a", "fixture the fake Central serves")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the result as JSON")
	cmd.Flags().BoolVar(&opts.writes, "writes", false, "start the server as write scenarios do, its writes_env set (a server may list its write tools only then)")
	cmd.Flags().StringVar(&opts.saveTools, "save-tools", "", "write the tool list (names, descriptions, input schemas) to this file, for bench scenarios lint --tools")
	cmd.Flags().StringVar(&opts.as, "as", "", "with --save-tools: the server's name in the list (default: the profile's)")
	addPassEnvFlag(cmd.Flags(), &opts.passEnv)
	addIsolationFlag(cmd.Flags(), &opts.isolation)
	return cmd
}

func runServersCheck(ctx context.Context, a *app, opts *serversCheckOptions) error {
	p, err := recorder.LoadProfile(opts.profile)
	if err != nil {
		return usageErr(err)
	}
	if err := p.ExpandEnv(a.getenv, opts.passEnv); err != nil {
		return usageErr(err)
	}
	if err := checkPassEnv(a, a.stderr, p, opts.passEnv); err != nil {
		return err
	}
	if err := checkIsolation(a.stderr, opts.isolation); err != nil {
		return err
	}
	noteClock(a, p)
	if opts.writes {
		if p.Env == nil {
			p.Env = map[string]string{}
		}
		for k, v := range p.WritesEnv {
			p.Env[k] = v
		}
	}
	rec := recorder.New(&recorder.Options{Harness: version, Environ: os.Environ(), PassEnv: opts.passEnv, Isolation: opts.isolation})
	defer rec.Close()
	res, err := rec.Check(ctx, p, opts.fixture)
	if err != nil {
		return setupErr(fmt.Errorf("server %s (%s): %w", p.Name, opts.profile, err))
	}
	tokens := recorder.NewTokenCounter()
	cost, err := tokens.MeasureTools(res.Tools)
	if err != nil {
		return setupErr(err)
	}
	list, _ := json.Marshal(res.Tools)
	defs, err := scoring.MeasureToolList(p.Name, list, tokens.Count)
	if err != nil {
		return setupErr(err)
	}
	var calls int
	var egress []string
	for _, e := range res.Boot {
		if e.Egress {
			egress = append(egress, e.Host)
		} else {
			calls++
		}
	}
	if opts.saveTools != "" {
		if err := saveToolList(a, opts, p, append(slices.Clip(res.Tools), res.Inner...), res.Annotations); err != nil {
			return err
		}
	}
	if opts.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{
			"server": p.Name, "protocol_version": res.Initialize.ProtocolVersion,
			"server_info": res.Initialize.ServerInfo, "tools": res.Tools, "cost": cost, "tool_definitions": defs,
			"tokenizer": recorder.Tokenizer, "write_gate": p.WriteGateVars(), "boot_calls": calls,
			"egress": egress, "isolation": res.Initialize.Isolation, "sandbox": res.Sandbox,
		})
	}
	// What the server said (its info, its tools) and what the profile
	// says are shown through escape.Line: one line each, control
	// characters written out, never sent to the terminal.
	w, show := a.stdout, escape.Line
	fmt.Fprintf(w, "server %s  (%s, %s)\n", show(p.Name), show(opts.profile), show(p.Transport))
	fmt.Fprintf(w, "  protocol %s  server info %s\n", show(res.Initialize.ProtocolVersion), show(string(res.Initialize.ServerInfo)))
	fmt.Fprintf(w, "  %d tools, %d characters, %d tokens (%s) of tool definitions\n", cost.Tools, cost.Chars, cost.Tokens, recorder.Tokenizer)
	fmt.Fprintf(w, "  %d tokens counting each tool as a model request carries it (the gate's tool_definition_tokens)\n", defs.Tokens)
	if gate := p.WriteGateVars(); len(gate) > 0 {
		fmt.Fprintf(w, "  write gate: %s\n", show(strings.Join(gate, " ")))
	} else {
		fmt.Fprintf(w, "  write gate: none declared (writes_env is empty)\n")
	}
	if len(p.Adapter.Rename) > 0 {
		fmt.Fprintf(w, "  adapter renames %d tools\n", len(p.Adapter.Rename))
	}
	if p.Catalog != nil {
		fmt.Fprintf(w, "  catalog: %d more inner tools (not in the tool list), listed by %s, described by %s\n", len(res.Inner), show(p.Catalog.List), show(p.Catalog.Describe))
	}
	for _, r := range p.Adapter.Routes {
		offered := false
		for _, t := range res.Tools {
			offered = offered || t.Name == r.Tool
		}
		note := ""
		if !offered {
			note = "  (NOT among its tools: the oracle cannot take this route)"
		}
		fmt.Fprintf(w, "  route to inner tools: %s%s\n", show(routeLine(r)), note)
	}
	if len(res.Sandbox) > 0 {
		fmt.Fprintf(w, "  isolation: %s (%s)\n", show(res.Initialize.Isolation), show(strings.Join(res.Sandbox, "; ")))
	} else {
		fmt.Fprintf(w, "  isolation: %s\n", show(res.Initialize.Isolation))
	}
	fmt.Fprintf(w, "  boot calls to Central: %d\n", calls)
	if len(egress) > 0 {
		fmt.Fprintf(w, "  egress refused at start-up: %s\n", show(strings.Join(egress, " ")))
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  TOOL\tCHARS\tTOKENS\tDESCRIPTION")
	perTool := map[string]int{}
	for _, t := range defs.Tools {
		perTool[t.Name] = t.Tokens
	}
	for _, t := range res.Tools {
		c, err := tokens.MeasureTools([]llm.Tool{t})
		if err != nil {
			return setupErr(err)
		}
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\n", show(t.Name), c.Chars, perTool[t.Name], show(firstLine(t.Description, 60)))
	}
	return tw.Flush()
}

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len([]rune(s)) > n {
		return string([]rune(s)[:n-1]) + "…"
	}
	return s
}

// saveToolList writes the tool list --save-tools asks for, atomically.
func saveToolList(a *app, opts *serversCheckOptions, p *recorder.Profile, tools []llm.Tool, annotations map[string]json.RawMessage) error {
	l := scenarios.ToolList{Format: scenarios.ToolListFormat, Server: p.Name, Repo: p.Repo, SHA: p.SHA}
	if opts.as != "" {
		l.Server, l.Profile = opts.as, p.Name
	}
	for _, t := range tools {
		l.Tools = append(l.Tools, scenarios.CapturedTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Annotations: annotations[t.Name]})
	}
	data, err := json.MarshalIndent(&l, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(opts.saveTools, append(data, '\n'), 0o644); err != nil {
		return usageErr(fmt.Errorf("--save-tools: %w", err))
	}
	fmt.Fprintf(a.stderr, "servers check: wrote %d tools of %s to %s\n", len(l.Tools), escape.Line(l.Server), opts.saveTools)
	return nil
}

// routeLine describes a route of a profile in one line.
func routeLine(r recorder.Route) string {
	if r.Code != "" {
		return fmt.Sprintf("%s(%s: %s block %q)", r.Tool, r.Code, r.Language, r.Call)
	}
	s := fmt.Sprintf("%s(%s: tool, %s: its arguments)", r.Tool, r.Name, r.Arguments)
	if r.ReadsOnly {
		s += ", reads only"
	}
	return s
}

package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/scenarios"
)

// scenariosLintOptions are the inputs of `bench scenarios lint`.
type scenariosLintOptions struct {
	paths  []string // files or directories; empty: the built-in golden suite
	config string   // stages file to check alongside, over the built-in stages; "" skips it
	noFake bool     // skip the checks against the fake Central
	tools  []string // captured tool lists to check expected tools and rules against
	expect []string // expectations files, checked too (against the tool lists with --tools)
}

func newScenariosLintCmd(a *app) *cobra.Command {
	opts := &scenariosLintOptions{}
	var config string
	cmd := &cobra.Command{
		Use:   "lint [PATH...]",
		Short: "Validate scenario manifests; exit 2 listing every error",
		Long: `lint loads every manifest strictly and validates it: known fields and types,
unique ids, known suites and categories, fixtures and entities that exist in
the fake Central, endpoint patterns that parse and are served, result schemas
that compile and accept their reference result, valid globs, no write in a
read scenario, must_not_call globs that match a route the fake serves. It
also checks the stages when --config names a file or ./bench.yaml exists:
that file read over the built-in stages. Every error is printed as
file:line:column: id: field: message; a warning (an evidence pin looser
than path:line@sha, say) as file:line:column: warning: ..., and does not
fail the lint.

--tools checks the expected tools and parameter rules against servers' real
tool lists, captured with bench servers check --save-tools (a file, or a
directory of them): a tool the server does not list, a required argument no
rule gives a value for, an argument the tool does not take, a value outside
its enum. The compared servers' lists are in servers/tools/. --expectations
adds a server's expectations file (docs/scenarios.md): its errors name that
file, and with --tools its rules are checked against the server's list.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.paths = args
			opts.config = config
			if config == "" {
				if _, err := os.Stat(defaultConfigFile); err == nil {
					opts.config = defaultConfigFile
				}
			}
			return runScenariosLint(a, opts)
		},
	}
	cmd.Flags().StringVar(&config, "config", "", "stages file to check, read over the built-in stages (default: ./bench.yaml when it exists)")
	cmd.Flags().BoolVar(&opts.noFake, "no-fake", false, "skip fixture, entity and route checks against the fake Central")
	cmd.Flags().StringSliceVar(&opts.tools, "tools", nil, "check expected tools and parameter rules against these captured tool lists (files or directories; repeatable)")
	cmd.Flags().StringSliceVar(&opts.expect, "expectations", nil, "a server's expectations file (docs/scenarios.md) to check with the scenarios, and with --tools against its tool list (repeatable)")
	return cmd
}

func runScenariosLint(a *app, opts *scenariosLintOptions) error {
	list, errs := loadScenarios(opts.paths)
	vopts := &scenarios.ValidateOptions{}
	if !opts.noFake {
		vopts.Catalog = fakecentral.NewCatalog()
	}
	warnings, err := scenarios.Lint(list, vopts)
	errs = append(errs, asErrorList(err)...)
	for _, path := range opts.expect {
		attached, err := attachExpectations(list, path)
		if err != nil {
			return err
		}
		list = attached
	}
	if len(opts.tools) > 0 {
		lists, err := scenarios.LoadToolLists(opts.tools...)
		if err != nil {
			return usageErr(err)
		}
		errs = append(errs, scenarios.CheckTools(list, lists)...)
	}
	if opts.config != "" {
		cfg, err := loadConfig(opts.config)
		errs = append(errs, asErrorList(err)...)
		if cfg != nil {
			for _, e := range asErrorList(scenarios.ValidateConfig(cfg, list)) {
				if e.Warning {
					warnings = append(warnings, e)
				} else {
					errs = append(errs, e)
				}
			}
		}
	}
	warnings.Sort()
	// Warnings first, then errors, each sorted: what loads and scores,
	// then what does not.
	errs.Sort()
	for _, e := range append(warnings, errs...) {
		fmt.Fprintln(a.stderr, escape.Text(e.Error()))
	}
	if len(errs) > 0 {
		return usageErr(fmt.Errorf("scenarios lint: %d error(s)", len(errs)))
	}
	files := map[string]bool{}
	for _, s := range list {
		files[s.File] = true
	}
	note := ""
	if len(warnings) > 0 {
		note = fmt.Sprintf(", %d warning(s)", len(warnings))
	}
	_, err = fmt.Fprintf(a.stdout, "ok: %d scenarios in %d files%s\n", len(list), len(files), note)
	return err
}

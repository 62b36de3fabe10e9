package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/scenarios"
)

const defaultConfigFile = "bench.yaml"

func newScenariosCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scenarios",
		Short: "Validate and list scenario manifests and stages",
		Long: `Scenario manifests are the benchmark's questions (docs/scenarios.md), in
bench's format (format: 1) or the methodology's own (a document with no
format key). Without PATH arguments the commands read the golden suite built
into bench (scenarios/golden); with them, the given files and directories.`,
	}
	cmd.AddCommand(newScenariosLintCmd(a), newScenariosListCmd(a), newScenariosStagesCmd(a))
	return cmd
}

// scenariosListOptions are the inputs of `bench scenarios list`.
type scenariosListOptions struct {
	paths  []string
	suite  string // only this suite
	stage  string // only the scenarios this stage selects
	config string // stages file read over the built-in ones, when stage is set
	json   bool
}

func newScenariosListCmd(a *app) *cobra.Command {
	opts := &scenariosListOptions{}
	cmd := &cobra.Command{
		Use:   "list [PATH...]",
		Short: "List scenarios with their suites and categories, and the counts",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.paths = args
			return runScenariosList(a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.suite, "suite", "", "only scenarios of this suite")
	cmd.Flags().StringVar(&opts.stage, "stage", "", "only scenarios the stage selects (from --config)")
	cmd.Flags().StringVar(&opts.config, "config", "", "stages read over the built-in ones, for --stage (default: ./bench.yaml when it exists)")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

// scenarioSummary is one row of `list`.
type scenarioSummary struct {
	ID        string   `json:"id"`
	Suite     string   `json:"suite"`
	Category  string   `json:"category"`
	WriteGate string   `json:"write_gate"`
	Fixture   string   `json:"fixture"`
	Tags      []string `json:"tags"`
	Servers   []string `json:"servers"`
	File      string   `json:"file"`
	Intent    string   `json:"intent"`
	// Distractors and PageSize are the scenario's (omitted when none).
	Distractors []string `json:"distractors,omitempty"`
	PageSize    int      `json:"page_size,omitempty"`
}

type scenarioListing struct {
	Stage     string            `json:"stage,omitempty"`
	Suite     string            `json:"suite,omitempty"`
	Scenarios []scenarioSummary `json:"scenarios"`
	Counts    scenarios.Counts  `json:"counts"`
}

func runScenariosList(a *app, opts *scenariosListOptions) error {
	if opts.suite != "" && !slices.Contains(scenarios.SuiteNames(), opts.suite) {
		return usageErr(fmt.Errorf("unknown suite %q (want one of %s)", opts.suite, strings.Join(scenarios.SuiteNames(), ", ")))
	}
	list, errs := loadScenarios(opts.paths)
	if len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintln(a.stderr, escape.Text(e.Error()))
		}
		return usageErr(fmt.Errorf("scenarios list: %d error(s) loading manifests (run bench scenarios lint)", len(errs)))
	}
	if opts.stage != "" {
		cfg, err := loadConfig(opts.config)
		if err != nil {
			return usageErr(err)
		}
		st := cfg.Stage(opts.stage)
		if st == nil {
			names := make([]string, len(cfg.Stages))
			for i, s := range cfg.Stages {
				names[i] = s.Name
			}
			return usageErr(fmt.Errorf("no stage %q in %s (have %s)", opts.stage, cfg.File, strings.Join(names, ", ")))
		}
		list = st.Select(list)
	}
	if opts.suite != "" {
		list = slices.DeleteFunc(list, func(s *scenarios.Scenario) bool { return s.Suite != opts.suite })
	}
	out := scenarioListing{Stage: opts.stage, Suite: opts.suite, Scenarios: []scenarioSummary{}, Counts: scenarios.Count(list)}
	for _, s := range list {
		servers := scenarios.ServerNames([]*scenarios.Scenario{s})
		tags := s.Tags
		if tags == nil {
			tags = []string{}
		}
		out.Scenarios = append(out.Scenarios, scenarioSummary{
			ID: s.ID, Suite: s.Suite, Category: s.Category, WriteGate: s.WriteGate,
			Fixture: s.Fixture, Tags: tags, Servers: servers, File: s.File, Intent: s.Intent,
			Distractors: s.Distractors, PageSize: s.PageSize,
		})
	}
	if opts.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	return printListing(a, out)
}

func printListing(a *app, l scenarioListing) error {
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSUITE\tCATEGORY\tGATE\tFIXTURE\tQUESTION")
	for _, s := range l.Scenarios {
		// A manifest may come from a pull request: its fields are shown
		// one line each, control characters written out.
		show := escape.Line
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", show(s.ID), show(s.Suite), show(s.Category), show(string(s.WriteGate)), show(s.Fixture), show(clip(s.Intent, maxIntentWidth)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	c := l.Counts
	fmt.Fprintf(a.stdout, "\n%d scenarios\n", c.Total)
	fmt.Fprintf(a.stdout, "suites:     %s\n", countLine(scenarios.SuiteNames(), c.Suites))
	fmt.Fprintf(a.stdout, "categories: %s\n", countLine(scenarios.CategoryNames(), c.Categories))
	servers := make([]string, 0, len(c.Servers))
	for srv := range c.Servers {
		servers = append(servers, srv)
	}
	slices.Sort(servers)
	fmt.Fprintf(a.stdout, "servers:    %s\n", escape.Line(countLine(servers, c.Servers)))
	fmt.Fprintf(a.stdout, "fixtures:   %s\n", escape.Line(countLine(slices.Sorted(maps.Keys(c.Fixtures)), c.Fixtures)))
	_, err := fmt.Fprintf(a.stdout, "distractors %d; paging to the end at a small page size %d (%s)\n", c.Distractors, total(c.Paging), escape.Line(countLine(slices.Sorted(maps.Keys(c.Paging)), c.Paging)))
	return err
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// countLine prints counts in the canonical order of keys.
func countLine(keys []string, counts map[string]int) string {
	var parts []string
	for _, k := range keys {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// loadScenarios reads the given paths, or the built-in golden suite.
func loadScenarios(paths []string) ([]*scenarios.Scenario, scenarios.ErrorList) {
	if len(paths) == 0 {
		// The embedded suite cannot change: parsed once per process (a
		// command may need it twice, to select and to score).
		goldenOnce.Do(func() {
			var err error
			goldenList, err = scenarios.Golden()
			goldenErrs = asErrorList(err)
		})
		return append([]*scenarios.Scenario(nil), goldenList...), goldenErrs
	}
	list, err := scenarios.LoadPaths(paths...)
	return list, asErrorList(err)
}

var (
	goldenOnce sync.Once
	goldenList []*scenarios.Scenario // shared and only read, like every loaded scenario
	goldenErrs scenarios.ErrorList
)

// asErrorList flattens err into manifest errors.
func asErrorList(err error) scenarios.ErrorList {
	if err == nil {
		return nil
	}
	var l scenarios.ErrorList
	if errors.As(err, &l) {
		return l
	}
	return scenarios.ErrorList{{Msg: err.Error()}}
}

// maxIntentWidth bounds the question column of bench scenarios list (the
// whole intent is in --json).
const maxIntentWidth = 80

// clip shortens s to n characters, ending with "…" when it cut.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

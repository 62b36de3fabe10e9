package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/internal/bounded"
	"github.com/mcpbench/bench/judge"
	"github.com/mcpbench/bench/scenarios"
	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

func newJudgeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "judge",
		Short: "LLM-as-judge: grade stored runs, and calibrate the judge against human labels",
		Long: `The judge grades a run with the evaluation guide's rubric (correctness,
tool use, compliance, 0-2 each), k samples at a fixed temperature, majority
per dimension, with the order of expectation and transcript randomised
(seeded). Task success never depends on it, and a gate refuses judge scores
while the judge's Cohen's kappa against human labels is below the bar.`,
	}
	cmd.AddCommand(newJudgeRunCmd(a), newJudgeCalibrateCmd(a))
	return cmd
}

type judgeCalibrateOptions struct {
	judgeFlags
	labels   string
	minKappa float64
	json     bool
}

func newJudgeCalibrateCmd(a *app) *cobra.Command {
	opts := &judgeCalibrateOptions{}
	cmd := &cobra.Command{
		Use:   "calibrate [--model SPEC] [--labels FILE]",
		Short: "Agreement and Cohen's kappa of the judge against human labels",
		Long: `Calibrate measures how far the judge agrees with people. With --model it
grades the labelled runs with that judge, stores the judgements under
judge/<model>/calibration/` + judge.SetName + `/<ref> (recorded and replayed
like bench judge run's: a second calibration is served from them, and
--offline never asks the judge), and compares them with the labels. The
labels are the shipped set unless --labels names another: ` + fmt.Sprint(shippedCount()) + ` runs of the
golden suite (a small local model's, the BM25 baseline's and the oracle's),
each labelled by reading its transcript against the rubric, with the reason
(each entry's labeler says who labelled it).

Without --model, FILE must carry the judge's scores too: a JSON array or
JSON lines of {"run": ID, "human": {"correctness": n, "tool_use": n,
"compliance": n}, "judge": {...}}.

It prints, per dimension and for the pass verdict (correctness 2 and
compliance 2), the observed agreement and Cohen's kappa, and exits 1 when
the pass verdict's kappa is below --min-kappa: reports then leave the
judge's scores out (bench report shows them only for a judge whose stored
calibration passes, under the same settings).`,
		Example: `  bench judge calibrate --model openai:gpt-4.1
  bench judge calibrate --model openai:gpt-4.1 --offline --json
  bench judge calibrate --labels labels.jsonl --min-kappa 0.6`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runJudgeCalibrate(cmd.Context(), a, opts)
		},
	}
	opts.judgeFlags.register(cmd.Flags())
	cmd.Flags().StringVar(&opts.labels, "labels", "", "labels file (default with --model: the shipped set)")
	floatVarRange(cmd.Flags(), &opts.minKappa, "min-kappa", 0.6, -1, 1, "the kappa below which judge scores are refused")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the calibration as JSON")
	return cmd
}

func shippedCount() int {
	l, _ := judge.ShippedLabels()
	return len(l)
}

func runJudgeCalibrate(ctx context.Context, a *app, opts *judgeCalibrateOptions) error {
	var labels []scoring.LabeledRun
	if opts.labels != "" {
		data, err := bounded.ReadFile(opts.labels, 64<<20)
		if err != nil {
			return usageErr(err)
		}
		if labels, err = judge.ParseLabels(data); err != nil {
			return usageErr(fmt.Errorf("%s: %w", opts.labels, err))
		}
	} else if opts.model == "" {
		return usageErr(fmt.Errorf("give --model (grade the shipped set with that judge) or --labels FILE (labels with the judge's scores)"))
	}
	var cfg *judge.Config
	if opts.model != "" {
		var err error
		if labels, cfg, err = gradeLabels(ctx, a, opts, labels); err != nil {
			return err
		}
	}
	cal, err := scoring.Calibrate(labels)
	if err != nil {
		return usageErr(fmt.Errorf("%s: %w", opts.labels, err))
	}
	if opts.json {
		// A labels file's scores alone print as before: the calibration.
		var out any = cal
		if cfg != nil {
			out = struct {
				Model       string               `json:"model"`
				Config      *judge.Config        `json:"config"`
				Calibration *scoring.Calibration `json:"calibration"`
			}{opts.model, cfg, cal}
		}
		if err := writeIndentedJSON(a.stdout, out); err != nil {
			return err
		}
	} else {
		if cfg != nil {
			fmt.Fprintf(a.stdout, "judge %s: %s\n", opts.model, cfg)
		}
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "DIMENSION\tN\tAGREEMENT\tKAPPA")
		for _, d := range cal.Dimensions {
			fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\n", d.Dimension, d.N, d.Observed, d.Kappa)
		}
		tw.Flush()
	}
	g := &scoring.Gate{JudgeMinKappa: &opts.minKappa}
	if err := scoring.JudgeUsable(g, cal); err != nil {
		fmt.Fprintf(a.stderr, "bench: %v\n", err)
		return &silentExit{code: exitGateFailed}
	}
	w := a.stdout
	if opts.json {
		w = a.stderr // stdout holds the JSON document only
	}
	fmt.Fprintf(w, "judge usable: kappa %.3f >= %.2f\n", cal.Kappa, opts.minKappa)
	return nil
}

// gradeLabels grades the labelled runs with the judge and returns the
// labels with the judge's scores (the runs it could not grade left out)
// and the judge's settings. The runs of the shipped set are read from
// its pack, those of a labels file from the store.
func gradeLabels(ctx context.Context, a *app, opts *judgeCalibrateOptions, labels []scoring.LabeledRun) ([]scoring.LabeledRun, *judge.Config, error) {
	jo, err := opts.options(a)
	if err != nil {
		return nil, nil, err
	}
	s, err := createStore(a)
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	runs := s
	if labels == nil {
		if labels, err = judge.ShippedLabels(); err != nil {
			return nil, nil, err
		}
		dir, err := os.MkdirTemp("", "bench-calibration-")
		if err != nil {
			return nil, nil, setupErr(err)
		}
		defer os.RemoveAll(dir)
		if runs, err = traces.Open(dir, nil); err != nil {
			return nil, nil, setupErr(err)
		}
		defer runs.Close()
		if err := judge.ImportShippedRuns(runs); err != nil {
			return nil, nil, setupErr(fmt.Errorf("the shipped calibration runs: %w", err))
		}
	}
	golden, err := scenarios.Golden()
	if err != nil {
		return nil, nil, err
	}
	byID := map[string]*scenarios.Scenario{}
	for _, sc := range golden {
		byID[sc.ID] = sc
	}
	var items []graded
	for i, l := range labels {
		id, err := traces.ParseID(l.Run)
		if err != nil {
			return nil, nil, usageErr(fmt.Errorf("label %d: run %q: %w", i+1, l.Run, err))
		}
		run, err := runs.GetRun(id)
		if err != nil {
			return nil, nil, usageErr(fmt.Errorf("label %d: %w", i+1, err))
		}
		sc := byID[run.Manifest.Scenario.ID]
		if sc == nil {
			return nil, nil, usageErr(fmt.Errorf("label %d: run %s is of scenario %s, not in the golden suite", i+1, id.Short(), run.Manifest.Scenario.ID))
		}
		if l.Ref == "" {
			labels[i].Ref = id.String()
		}
		items = append(items, graded{ref: judge.CalibrationRef(labels[i]), run: run, sc: sc})
	}
	t, err := gradeAll(ctx, a, s, items, jo)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(a.stderr, "calibration: %s\n", t)
	var out []scoring.LabeledRun
	var cfg *judge.Config
	for i, it := range items {
		id, err := s.Ref(traces.JudgeRef(jo.Model.Name, it.ref))
		if err != nil {
			continue
		}
		j, err := s.GetRun(id)
		if err != nil || j.Manifest.Grades == nil || *j.Manifest.Grades != it.run.Manifest.RunID || j.Manifest.Outcome != traces.OutcomeAnswered {
			continue
		}
		res, err := scoring.JudgementScores(j)
		if err != nil {
			continue
		}
		c := judge.ConfigOf(j)
		cfg = &c
		l := labels[i]
		sc := res.Scores
		l.Judge = &sc
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, nil, withCode(exitGateFailed, fmt.Errorf("the judge graded none of the %d labelled runs", len(labels)))
	}
	return out, cfg, nil
}

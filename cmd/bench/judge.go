package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/internal/bounded"
	"github.com/mcpbench/bench/scoring"
)

func newJudgeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "judge",
		Short: "LLM-as-judge: calibrate the optional rubric metric against human labels",
		Long: `The judge grades a run with the evaluation guide's rubric (correctness,
tool use, compliance, 0-2 each), k samples at a fixed temperature, majority
per dimension, with the order of expectation and transcript randomised
(seeded). Task success never depends on it, and a gate refuses judge scores
while the judge's Cohen's kappa against human labels is below the bar.`,
	}
	cmd.AddCommand(newJudgeCalibrateCmd(a))
	return cmd
}

type judgeCalibrateOptions struct {
	labels   string
	minKappa float64
	json     bool
}

func newJudgeCalibrateCmd(a *app) *cobra.Command {
	opts := &judgeCalibrateOptions{}
	cmd := &cobra.Command{
		Use:   "calibrate --labels FILE",
		Short: "Agreement and Cohen's kappa of the judge against human labels",
		Long: `Calibrate reads FILE, a JSON array or JSON lines of
{"run": ID, "human": {"correctness": n, "tool_use": n, "compliance": n},
"judge": {...}} and prints, per dimension and for the pass verdict
(correctness 2 and compliance 2), the observed agreement and Cohen's kappa.
It exits 1 when the pass verdict's kappa is below --min-kappa.`,
		Example: `  bench judge calibrate --labels labels.jsonl --min-kappa 0.6`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runJudgeCalibrate(cmd.Context(), a, opts)
		},
	}
	cmd.Flags().StringVar(&opts.labels, "labels", "", "labels file (required)")
	floatVarRange(cmd.Flags(), &opts.minKappa, "min-kappa", 0.6, -1, 1, "the kappa below which judge scores are refused")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the calibration as JSON")
	return cmd
}

func runJudgeCalibrate(_ context.Context, a *app, opts *judgeCalibrateOptions) error {
	if opts.labels == "" {
		return usageErr(fmt.Errorf("--labels is required"))
	}
	data, err := bounded.ReadFile(opts.labels, 64<<20)
	if err != nil {
		return usageErr(err)
	}
	labels, err := parseLabels(data)
	if err != nil {
		return usageErr(fmt.Errorf("%s: %w", opts.labels, err))
	}
	cal, err := scoring.Calibrate(labels)
	if err != nil {
		return usageErr(fmt.Errorf("%s: %w", opts.labels, err))
	}
	if opts.json {
		if err := writeIndentedJSON(a.stdout, cal); err != nil {
			return err
		}
	} else {
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
	fmt.Fprintf(a.stdout, "judge usable: kappa %.3f >= %.2f\n", cal.Kappa, opts.minKappa)
	return nil
}

// parseLabels reads a JSON array or JSON lines of labeled runs, strictly.
func parseLabels(data []byte) ([]scoring.LabeledRun, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var out []scoring.LabeledRun
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&out); err != nil {
			return nil, err
		}
		return out, nil
	}
	var out []scoring.LabeledRun
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		t := bytes.TrimSpace(sc.Bytes())
		if len(t) == 0 {
			continue
		}
		var l scoring.LabeledRun
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/mcpbench/bench/batch"
	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/recorder"
)

// printRecordSummary prints what a recording did.
func printRecordSummary(w io.Writer, s *batch.RecordResult, total int) {
	retried := ""
	if s.Retried > 0 {
		retried = fmt.Sprintf(", %d recorded again", s.Retried)
	}
	fmt.Fprintf(w, "recorded %d of %d runs (%d already stored%s) in %s\n", s.Recorded, total, s.Skipped, retried, s.Elapsed.Round(time.Millisecond))
	if n := s.NotStoredCount(); n > 0 {
		reasons := map[recorder.NoResultReason]int{}
		var all []error
		for r, l := range s.NotStored {
			reasons[r] = len(l)
			all = append(all, l...)
		}
		fmt.Fprintf(w, "  not stored (no result about the server): %d: %s\n", n, joinCounts(reasons))
		const shown = 5
		for i, e := range all {
			if i == shown {
				fmt.Fprintf(w, "    ... and %d more\n", len(all)-shown)
				break
			}
			fmt.Fprintf(w, "    %s\n", escape.Line(llm.Truncate(strings.ReplaceAll(e.Error(), "\n", " "), 300)))
		}
	}
	if len(s.ByOutcome) > 0 {
		fmt.Fprintf(w, "  outcomes: %s\n", joinCounts(s.ByOutcome))
	}
	if len(s.Failures) > 0 {
		fmt.Fprintf(w, "  failures by kind: %s\n", joinCounts(s.Failures))
	}
	fmt.Fprintf(w, "  tokens: %d in, %d out\n", s.In, s.Out)
	if note := prestartNote(s.Prestarts); note != "" {
		fmt.Fprintf(w, "  %s\n", note)
	}
}

// prestartNote says, when any, how many servers started ahead of their
// runs the runs could not use, how long a run waited for one at most and
// why the first failed: a batch that took longer than it should says why.
func prestartNote(f recorder.PrestartFailures) string {
	if f.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d server(s) started ahead of their runs could not be used; each run started another after waiting for it (at most %s). The first: %s",
		f.N, f.Longest.Round(time.Millisecond), escape.Line(llm.Truncate(strings.ReplaceAll(f.First, "\n", " "), 300)))
}

func joinCounts[K ~string](m map[K]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", orDash(k), m[K(k)]))
	}
	return strings.Join(parts, ", ")
}

// Package scoring turns runs into numbers: per-run metrics computed from a
// run's trace and its scenario alone, their aggregation and comparison, the
// gate's verdict, and the reports bench prints. docs/methodology.md defines
// every metric exactly as this package computes it; MethodologyVersion
// names the version implemented.
//
// # Vocabulary
//
//   - Run metrics ([RunMetrics], from [Score]), named as the seeds name
//     them: task_success, tool_selection_accuracy, param_acc (and bench's
//     param_field_acc), token_usage (with the share of tool definitions),
//     latency_ms (the wall clock; the summed form is summed_latency_ms),
//     api_call_count (boot calls apart) and its excess over the plan,
//     turns, invalid_call_rate, safety_failure
//     (with one [SafetyFinding] per broken rule) and the gate-absence
//     differential ([GateAbsence]: writes without the server's own
//     confirmation step, reported, never pass/fail).
//   - Absent: the server has no tools for the scenario (no expected_tools
//     entry, or an empty list; Scenario.ToolsFor). The run is not scored
//     (safety still is) and tables show "absent".
//   - No result schema (a manifest in the methodology's format): task
//     success is the expect.api_calls alone; runs and scenario results say
//     so, and reports warn ([SchemaWarnings]).
//   - Stale: a strict replay that stopped at a miss. Not scored; the share
//     of stale runs can make a gate inconclusive.
//   - Scenario result ([ScenarioResult], from [Aggregate], or from an
//     [Aggregator] fed one run at a time, which can keep a short summary
//     of each run instead of its metrics): one server's runs of one
//     scenario, with a [Summary] per metric (mean, median, IQR, p95,
//     type-7 quantiles), pass@k and pass^k.
//   - Suite summary ([SuiteSummary]): one aggregation rule, scenarios the
//     unit: every figure over the scenarios' values (each the mean of its
//     runs), token usage and latency as mean and p95, invalid_call_rate
//     as a ratio of sums; failed on any safety failure.
//   - Comparison ([Comparison], from [Compare]): baseline against current,
//     aligned by scenario id; per-scenario deltas with a paired t test over
//     run-index pairs, suite deltas with a paired seeded bootstrap (its p
//     and interval from the same resamples), the scenarios that broke and
//     were fixed, McNemar's exact test reported beside. Every change is
//     "improved", "regressed", "within noise" or "unchanged".
//   - Gate ([Gate], from bench.yaml through [ParseGate]) and [Verdict]
//     (from [Evaluate]): the methodology's thresholds and the guide's 0.03
//     on the stage's point estimates, significance beside every row;
//     pass (0), regression (1), safety (3), inconclusive (5).
//   - Report ([Report], from [BuildReport]): all of the above, written as
//     JSON (the documented format, [ReportFormat]), Markdown for pull
//     requests, JUnit XML, terminal text, and for releases a results page
//     with an SVG chart.
//
// # Determinism
//
// Nothing here reads the clock, the environment or a global random source,
// or iterates a map into output. The bootstrap and the judge's position
// randomisation use a seeded splitmix64. Identical inputs give
// byte-identical reports; tests check it.
//
// The package never touches the network or the trace store's format: it
// takes *traces.Run values and scenarios, and cmd/bench loads them.
package scoring

#!/usr/bin/env bash
# make demo: bench's main job, offline and without keys.
#
#  1. build bench and the reference MCP server (examples/central-mcp);
#  2. record the golden suite's core and safety stages with the offline
#     baseline model against the reference server, 5 runs per scenario;
#  3. replay them against the unchanged server: pass, zero misses;
#  4. replay against the server with --inject extra-pagination (the gate
#     fails on api_call_excess, exit 1) and --inject leak-secret (a canary
#     secret in a tool result, exit 3);
#  5. print the scoreboard.
#
# Everything lands in .bench/demo (override with DEMO_DIR); RUNS=N changes
# the runs per scenario. The script exits non-zero when a step does not end
# with the exit code it expects.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WORK=${DEMO_DIR:-$ROOT/.bench/demo}
RUNS=${RUNS:-5}
BENCH=$ROOT/bin/bench
SERVER=$ROOT/bin/central-mcp
STORE=$WORK/store
T0=$(date +%s)
SUMMARY=()
FAILED=0

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
elapsed() { echo $(( $(date +%s) - $1 ))s; }

# expect CODE WHAT CMD...: run CMD, show its output (long outputs cut),
# and check its exit code.
expect() {
	local want=$1 what=$2; shift 2
	local t=$(date +%s) out code log
	echo "+ ${*#$ROOT/}"
	# Progress while the step runs: bench's "[i/n] ..." lines, one line
	# rewritten in place; the whole output is shown when the step ends.
	log=$(mktemp)
	"$@" 2>&1 | tee "$log" | awk '/^\[[0-9]+\/[0-9]+\] / { printf "\r   %-76.76s", $0; fflush(); shown = 1 } END { if (shown) printf "\r%80s\r", "" }'
	code=${PIPESTATUS[0]}
	out=$(cat "$log"); rm -f "$log"
	local n=$(printf '%s\n' "$out" | wc -l)
	if [ "$n" -gt 40 ]; then
		printf '%s\n' "$out" | grep -v '^\[[0-9]*/[0-9]*\] ' | head -n 40
		echo "   ... ($n lines in all; progress lines hidden)"
	else
		printf '%s\n' "$out"
	fi
	local verdict=ok
	if [ "$code" != "$want" ]; then verdict="UNEXPECTED"; FAILED=1; fi
	SUMMARY+=("$(printf '%-58s exit %s (expected %s) %-10s %s' "$what" "$code" "$want" "$verdict" "$(elapsed "$t")")")
}

say "1. build bench and the reference server"
mkdir -p bin "$WORK"
# bench as make build builds it (stripped, git describe's version; under
# make demo already up to date). Without make, go build: bench then reports
# the version the go command recorded.
if command -v make >/dev/null; then
	make --no-print-directory build BIN="$BENCH" || exit 4
else
	go build -o "$BENCH" ./cmd/bench || exit 4
fi
go build -o "$SERVER" ./examples/central-mcp || exit 4
rm -rf "$STORE" "$WORK"/reports
echo "bin/bench and bin/central-mcp built; work directory ${WORK#$ROOT/}"

# Profiles: servers/reference.yaml with the built binary instead of go run,
# and one per injected regression (the same server name, so the same
# scenarios' expected tools apply).
bash scripts/reference-profile.sh "$SERVER" > "$WORK/reference.yaml"
bash scripts/reference-profile.sh "$SERVER" --inject extra-pagination > "$WORK/reference-extra-pagination.yaml"
bash scripts/reference-profile.sh "$SERVER" --inject leak-secret > "$WORK/reference-leak-secret.yaml"

# The gate: the built-in stages' (scenarios/stages.yaml), except the absolute floors of the core stage
# (task success >= 0.80, tool selection >= 0.90), which are meant for real
# models; the baseline model is a lexical stand-in that does not reach
# them. Every comparison with the recorded baseline stays on.
bash scripts/gate-config.sh --no-floors > "$WORK/bench.yaml"
echo "gate: the built-in stages with the core floors off (the baseline model is no real model); see ${WORK#$ROOT/}/bench.yaml"

B=("$BENCH" --store "$STORE")
say "2. record the core and safety stages with the baseline model, $RUNS runs per scenario"
expect 0 "record core ($RUNS runs each)" "${B[@]}" record --stage core --server "$WORK/reference.yaml" --model baseline --runs "$RUNS"
expect 0 "record safety ($RUNS runs each)" "${B[@]}" record --stage safety --server "$WORK/reference.yaml" --model baseline --runs "$RUNS"

say "3. replay against the unchanged server: expect pass and zero misses"
for st in core safety; do
	expect 0 "replay $st, unchanged server" "${B[@]}" replay --stage "$st" --config "$WORK/bench.yaml" --server "$WORK/reference.yaml" \
		--report-dir "$WORK/reports/unchanged-$st" --format text,json,md,junit
done

say "4a. a pull request that pages every list one item at a time (--inject extra-pagination)"
echo "   lenient mode: the few runs whose tool results change are served anyway (marked diverged) and scored"
expect 1 "replay core, --inject extra-pagination (lenient)" "${B[@]}" replay --stage core --config "$WORK/bench.yaml" \
	--server "$WORK/reference-extra-pagination.yaml" --mode lenient --report-dir "$WORK/reports/extra-pagination" --format text,json,md,junit

say "4b. a pull request that returns the WLAN passphrase (--inject leak-secret)"
expect 3 "replay safety, --inject leak-secret" "${B[@]}" replay --stage safety --config "$WORK/bench.yaml" \
	--server "$WORK/reference-leak-secret.yaml" --report-dir "$WORK/reports/leak-secret" --format text,json,md,junit

say "5. the scoreboard of the recorded runs"
expect 0 "report (scoreboard)" "${B[@]}" report --from golden/

say "summary"
printf '%s\n' "${SUMMARY[@]}"
cat <<'LEGEND'

What the reports above say (docs/methodology.md defines every number):
  outcomes   answered (the model submitted a result)  text (it answered in words)  max_turns
             stale (a strict replay stopped at a miss: the server changed what the model saw)
             diverged (a lenient replay served the recorded turn after a miss)  error
  columns    SCEN scenarios scored · ABSENT the server has no tool for them (not an error)
             TASK task success · TOOLS tool selection accuracy · PARAM_ACC every parameter right
             FIELD_ACC parameters right, field by field · TURNS average turns
             INVALID invalid calls per turn · TOKENS and LATENCY mean/p95 over scenarios
             EXCESS API calls beyond the plan, per scenario · SAFETY pass, or FAILED(runs)
  gate-absent writes   writes the server made without asking for confirmation: a
             difference between servers, never a pass/fail
  verdicts   PASS 0 · REGRESSION 1 (a gated metric past its threshold) · SAFETY FAILURE 3
             · INCONCLUSIVE 5 (stale replays): the exit code of bench replay
LEGEND
echo
echo "reports: ${WORK#$ROOT/}/reports/*/REPORT.{txt,json,md,xml}; traces: bin/bench --store ${STORE#$ROOT/} traces ls"
echo "demo took $(elapsed "$T0") (offline; no model, key or network)"
if [ "$FAILED" != 0 ]; then
	echo "demo: a step did not end as expected" >&2
	exit 1
fi

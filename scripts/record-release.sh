#!/usr/bin/env bash
# The release recording: the per-PR stage recorded with a real language
# model, exported as the pack every pull request then replays
# (.github/workflows/release.yml runs this; so can you).
#
#   scripts/record-release.sh OUT.benchpack
#
# With BENCH_MODEL unset it uses the local model (scripts/local-model.sh:
# installed if needed, started, stopped at the end), so a release needs no
# key. BENCH_MODEL=openai:MODEL or anthropic:MODEL records with that model
# instead (its key and base URL from the environment, as bench record
# reads them).
#
# Environment: BENCH (default bin/bench, built if missing), PROFILES (default
# servers/reference.yaml; several, space-separated, for a head-to-head),
# STAGE (default smoke: the stage pull requests replay; 9 scenarios), RUNS
# (default 5), TEMPERATURE (default 0.7), SEED (default 1: run i of a
# scenario is sampled with seed SEED+i), STORE (default .bench/release).
# With the local model, 5 runs of the smoke stage take about 20 minutes per
# server on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/record-release.sh OUT.benchpack}
BENCH=${BENCH:-bin/bench}
PROFILES=${PROFILES:-servers/reference.yaml}
STAGE=${STAGE:-smoke}
RUNS=${RUNS:-5}
TEMPERATURE=${TEMPERATURE:-0.7}
SEED=${SEED:-1}
STORE=${STORE:-.bench/release}
[ -x "$BENCH" ] || make --no-print-directory build BIN="$BENCH"

if [ -z "${BENCH_MODEL:-}" ]; then
	bash scripts/local-model.sh installed || bash scripts/local-model.sh install
	export BENCH_LOCAL_MODEL_RUN=${BENCH_LOCAL_MODEL_RUN:-$STORE.model}
	trap 'bash scripts/local-model.sh stop >/dev/null 2>&1' EXIT
	eval "$(bash scripts/local-model.sh start)"
	BENCH_MODEL=$BENCH_LOCAL_MODEL
fi
echo "record-release: stage $STAGE, $RUNS runs at temperature $TEMPERATURE, seeds from $SEED, model $BENCH_MODEL"
for p in $PROFILES; do
	"$BENCH" --store "$STORE" record --stage "$STAGE" --server "$p" --model "$BENCH_MODEL" \
		--runs "$RUNS" --temperature "$TEMPERATURE" --seed "$SEED" --request-timeout 10m
done
"$BENCH" --store "$STORE" traces verify
"$BENCH" --store "$STORE" traces export -o "$out"
echo "record-release: wrote $out"

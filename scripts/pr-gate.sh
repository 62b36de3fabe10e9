#!/usr/bin/env bash
# The per-PR gate: replay recorded runs against this checkout's server and
# gate them. .github/workflows/benchmark.yml runs exactly this, and so does
# `make test` (cmd/bench TestPRGateScript), so the CI path is tested for real.
#
#   scripts/pr-gate.sh PACK
#
# PACK is a trace pack (bench traces export) of the baseline's recorded runs:
# in CI, recorded from the pull request's base with the offline baseline
# model; for a release, recorded with a live model. The script imports it
# into a fresh store, replays every stage in STAGES against PROFILE, writes
# the reports (text, JSON, Markdown, JUnit) under REPORT_DIR/<stage>/,
# appends the Markdown to $GITHUB_STEP_SUMMARY when it is set (only a
# REPORT.md this run's bench wrote: earlier or planted reports are removed
# first, and a symlink is never read), and exits
# with the most serious stage's code: 3 safety, 1 regression, 5
# inconclusive, 4 setup, 2 bad input, else 0.
#
# It runs in the working directory it is started in (the repository under
# test: a ./bench.yaml there is read over the built-in stages, and PROFILE
# is relative to it), which need not be bench's checkout: the GitHub Action
# (action.yml, scripts/action.sh) runs it in another repository.
#
# Environment: BENCH (default bin/bench, built from bench's checkout if
# missing), PROFILE (default servers/reference.yaml), STAGES (default "core
# safety"), MODE (strict, lenient or live; default strict), CONFIG (a stages
# file for --config), WORK (default .bench/pr-gate), REPORT_DIR (default
# $WORK/reports), FLOORS (on, or off for a pack recorded with the lexical
# baseline model: the stages in effect without their absolute floors).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd) # bench's checkout

pack=${1:?usage: scripts/pr-gate.sh PACK}
BENCH=${BENCH:-bin/bench}
PROFILE=${PROFILE:-servers/reference.yaml}
STAGES=${STAGES:-core safety}
MODE=${MODE:-strict}
WORK=${WORK:-.bench/pr-gate}
REPORT_DIR=${REPORT_DIR:-$WORK/reports}

if [ ! -x "$BENCH" ]; then
	make -C "$ROOT" build BIN="$ROOT/bin/bench" || exit 4
	BENCH=$ROOT/bin/bench
fi
rm -rf "$WORK/store"
mkdir -p "$WORK" "$REPORT_DIR"
# The stages: bench's built-in ones, with CONFIG or ./bench.yaml read over
# them.
config=()
if [ -n "${CONFIG:-}" ]; then
	config=(--config "$CONFIG")
fi
if [ "${FLOORS:-on}" = off ]; then
	# The stages in effect, their absolute floors set to 0.
	"$BENCH" scenarios stages "${config[@]}" |
		sed -e 's/^\( *task_success_rate:\) [0-9.]*/\1 0/' -e 's/^\( *tool_selection_accuracy:\) [0-9.]*/\1 0/' > "$WORK/bench.yaml" || exit 4
	config=(--config "$WORK/bench.yaml")
fi
"$BENCH" --store "$WORK/store" traces import "$pack" || exit $?

worst=0
rank() { # the more serious of two exit codes
	local order="3 1 5 4 2 0"
	for c in $order; do
		if [ "$1" = "$c" ] || [ "$2" = "$c" ]; then echo "$c"; return; fi
	done
	echo "$1"
}
for stage in $STAGES; do
	# A report left by an earlier run, or planted in a pull request's
	# checkout (a symlink to a secret, say), must not reach the step summary
	# when this replay writes none: remove them first (rm removes a symlink,
	# not what it points to).
	md=$REPORT_DIR/$stage/REPORT.md
	rm -f "$REPORT_DIR/$stage/REPORT.txt" "$REPORT_DIR/$stage/REPORT.json" "$md" "$REPORT_DIR/$stage/REPORT.xml"
	echo "== replay of stage $stage against $PROFILE"
	"$BENCH" --store "$WORK/store" replay --stage "$stage" --server "$PROFILE" --mode "$MODE" "${config[@]}" \
		--report-dir "$REPORT_DIR/$stage" --format text,json,md,junit
	code=$?
	echo "== stage $stage: exit $code"
	# Appended, not replaced: the runner owns the file (outside the
	# checkout) and earlier steps' summaries stay in it.
	if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$md" ] && [ ! -L "$md" ]; then
		{ echo "## bench: stage $stage"; cat "$md"; echo; } >> "$GITHUB_STEP_SUMMARY"
	fi
	worst=$(rank "$worst" "$code")
done
exit "$worst"

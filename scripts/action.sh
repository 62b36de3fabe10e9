#!/usr/bin/env bash
# The GitHub Action's step (action.yml): fetch the trace pack, then replay
# it against the repository's server and gate it (scripts/pr-gate.sh), in
# the working directory (the repository under test). It runs the same way
# outside GitHub: cmd/bench TestActionScript runs it against a local pack.
#
# Environment (the Action's inputs):
#   BENCH_PACK     a pack file, an http(s):// or file:// URL, "release" (the
#                  latest release of GITHUB_REPOSITORY, asset BENCH_PACK_ASSET)
#                  or "release:TAG"
#   BENCH_PACK_ASSET  the release asset's name (default bench.benchpack)
#   BENCH_PROFILE  the server profile (required)
#   BENCH_STAGES   stages to replay (default smoke)
#   BENCH_MODE     strict, lenient or live (default strict)
#   BENCH_CONFIG   stages file read over the built-in ones (default: ./bench.yaml when it exists)
#   BENCH_FLOORS   on, or off for a pack recorded with the lexical baseline model
#   BENCH          the bench binary (default: bench on PATH)
#   BENCH_WORK     work directory (default $RUNNER_TEMP/bench, else .bench/action)
# Writes exit-code and report-dir to $GITHUB_OUTPUT when set, the Markdown
# reports to $GITHUB_STEP_SUMMARY when set, and exits with bench's code.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${BENCH_PROFILE:?BENCH_PROFILE (the profile input) is required}"
pack=${BENCH_PACK:-release}
asset=${BENCH_PACK_ASSET:-bench.benchpack}
work=${BENCH_WORK:-${RUNNER_TEMP:+$RUNNER_TEMP/bench}}
work=${work:-.bench/action}
mkdir -p "$work"
bench=${BENCH:-$(command -v bench || true)}
if [ -z "$bench" ]; then
	echo "bench-action: no bench binary (set BENCH, or install bench first)" >&2
	exit 4
fi

case "$pack" in
http://* | https://* | file://*)
	echo "bench-action: fetching $pack"
	curl -fsSL --retry 3 -o "$work/pack.benchpack" "$pack" || { echo "bench-action: cannot fetch $pack" >&2; exit 4; }
	pack=$work/pack.benchpack
	;;
release | release:*)
	tag=${pack#release}
	tag=${tag#:}
	echo "bench-action: fetching $asset from ${tag:-the latest} release of ${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is needed for a release pack}"
	rm -f "$work/$asset"
	# shellcheck disable=SC2086 # an empty tag is no argument: the latest release
	gh release download $tag --repo "$GITHUB_REPOSITORY" --pattern "$asset" --dir "$work" ||
		{ echo "bench-action: no asset $asset on that release: record one (docs/ci.md)" >&2; exit 4; }
	pack=$work/$asset
	;;
*)
	[ -f "$pack" ] || { echo "bench-action: no pack at $pack" >&2; exit 2; }
	;;
esac

BENCH=$bench PROFILE=$BENCH_PROFILE STAGES=${BENCH_STAGES:-smoke} MODE=${BENCH_MODE:-strict} \
	CONFIG=${BENCH_CONFIG:-} FLOORS=${BENCH_FLOORS:-on} WORK=$work REPORT_DIR=$work/reports \
	bash "$here/pr-gate.sh" "$pack"
code=$?
if [ -n "${GITHUB_OUTPUT:-}" ]; then
	{ echo "exit-code=$code"; echo "report-dir=$work/reports"; } >> "$GITHUB_OUTPUT"
fi
exit "$code"

#!/usr/bin/env bash
# Memory of `bench report` (issue 8): peak RSS of the scoreboard over the
# core stage recorded once (one run a scenario) and REPORT_RSS_RUNS times
# (default: enough for about 5,000 runs, 23 with the core stage's 220
# scenarios; a minute or two to record), in every output format, each the
# median of REPORT_RSS_REPEAT runs (default 5; RSS moves by some MB from
# one run to the next with the GC's timing).
# Target: <= 150 MB at ~5,000 runs, and within 1.3x of the 98-run value.
#
# bench report scores each run as it reads it and keeps a summary of it
# (its metrics, for --format json). What stays is the process's baseline
# (30 MB for bench version; the tokenizer's vocabulary, the scenarios and
# fixtures, the store opened), the store's caches, bounded (4 MiB of base
# runs' documents; pebble's block cache, 1 MiB), and the summaries (some
# 350 bytes a run; 1 KB for json). bench report's soft memory limit (64
# MiB; GOMEMLIMIT overrides it) alone paces the collector (GOGC=off unless
# set, cmd/bench/main.go): the heap fills to it, whatever the runs.
#
# Needs /usr/bin/time (GNU time).
set -euo pipefail
cd "$(dirname "$0")/../.."
LARGE=${REPORT_RSS_RUNS:-}
REPEAT=${REPORT_RSS_REPEAT:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/bench.linked" ./cmd/bench
# Measured from a copy: a binary fresh from the linker shows 4-8 MB more
# RSS, whatever the command (bench version too), than a copy of it.
cp "$tmp/bench.linked" "$tmp/bench"
CGO_ENABLED=0 go build -o "$tmp/central-mcp" ./examples/central-mcp
sed "s|^command:.*|command: [\"$tmp/central-mcp\"]|" servers/reference.yaml > "$tmp/reference.yaml"
B="$tmp/bench"

record() { # store, runs per scenario
  "$B" --store "$1" record --stage core --server "$tmp/reference.yaml" --model baseline \
    --reuse-server --runs "$2" > "$tmp/record.log" 2>&1 || { cat "$tmp/record.log" >&2; exit 1; }
  "$B" --store "$1" traces ls | wc -l
}
small_n=$(record "$tmp/small" 1)
[ -n "$LARGE" ] || LARGE=$(( (5000 + small_n - 1) / small_n ))
echo "recorded the core stage once ($small_n runs); recording it ${LARGE} times (baseline model, reference server)..."
large_n=$(record "$tmp/large" "$LARGE")
# A results page (--release) needs 5 runs a scenario: its small store is
# the core stage recorded 5 times.
five_n=$(record "$tmp/five" 5)
echo "stores: $(du -sh "$tmp/small" | cut -f1) ($small_n runs), $(du -sh "$tmp/five" | cut -f1) ($five_n runs), $(du -sh "$tmp/large" | cut -f1) ($large_n runs)"

rss() { # store, report flags... -> median peak RSS in KB
  local store=$1
  shift
  for _ in $(seq "$REPEAT"); do
    /usr/bin/time -f '%M' -o "$tmp/time" "$B" --store "$store" report "$@" > /dev/null 2> "$tmp/err" \
      || { cat "$tmp/err" >&2; exit 1; }
    tail -n 1 "$tmp/time"
  done | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}
for f in text json md junit release; do
  flags=(--format "$f")
  small=$tmp/small n1=$small_n
  if [ "$f" = release ]; then flags=(--release 0.0.0 --out-dir "$tmp/docs"); small=$tmp/five n1=$five_n; fi
  a=$(rss "$small" "${flags[@]}")
  b=$(rss "$tmp/large" "${flags[@]}")
  awk -v f="$f" -v a="$a" -v b="$b" -v n1="$n1" -v n2="$large_n" 'BEGIN {
    printf "bench report %-8s peak RSS %5d runs %6.1f MB   %5d runs %6.1f MB   ratio %.2fx  (target <= 150 MB, <= 1.3x)\n",
      f, n1, a/1024, n2, b/1024, b/a }'
done

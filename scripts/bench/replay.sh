#!/usr/bin/env bash
# Replay speed and memory (issue 7).
#
# Speed: the core stage (1 recorded run per scenario, baseline model,
# reference server; then 5 per scenario, as make demo records them)
# replayed with --reuse-server and without it. The floor
# is what replay cannot avoid: the server's own tool-call time, which
# includes the fake Central's (the mcp.call latencies of the replay runs,
# measured at --latency-resolution 1us so the traces hold real timings).
# Model time is not in the floor: replay never waits for it.
# Target: wall <= 1.3x the floor with --reuse-server. --parallel 2 runs two
# at once (the floor then sums tool-call times that overlap in time).
#
# Memory: peak RSS of bench replay over ~100 and ~1,000 runs (the core
# stage recorded REPLAY_RSS_RUNS=10 times; one suite of it vs all of it).
# Target: within 20%.
#
# Needs jq or python3 to sum the trace timings; /usr/bin/time for RSS.
set -euo pipefail
cd "$(dirname "$0")/../.."
RSS_RUNS=${REPLAY_RSS_RUNS:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/bench" ./cmd/bench
CGO_ENABLED=0 go build -o "$tmp/central-mcp" ./examples/central-mcp
sed "s|^command:.*|command: [\"$tmp/central-mcp\"]|" servers/reference.yaml > "$tmp/reference.yaml"
B="$tmp/bench"

sum_calls() { # store prefix -> "runs<TAB>sum of mcp.call latency_us"
  "$B" --store "$1" traces show --json "$2" > "$tmp/runs.json"
  if command -v jq >/dev/null; then
    jq -r '[length, ([.[].run.events[] | select(.kind=="mcp.call") | .call.latency_us] | add // 0)] | @tsv' "$tmp/runs.json"
  else
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(len(d), sum(e["call"]["latency_us"] for r in d for e in r["run"]["events"] if e["kind"]=="mcp.call"), sep="\t")' "$tmp/runs.json"
  fi
}

echo "recording the core stage once (baseline model, reference server)..."
"$B" --store "$tmp/store" record --stage core --server "$tmp/reference.yaml" --model baseline --runs 1 >/dev/null 2>&1

speed() { # label, extra flags[, store]
  local t0 t1 code=0 store=${3:-$tmp/store}
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  "$B" --store "$store" replay --stage core --server "$tmp/reference.yaml" --latency-resolution 1us --format json $2 \
    > /dev/null 2> "$tmp/err" || code=$?
  t1=$(date +%s%N)
  read -r n floor <<< "$(sum_calls "$store" replay/)"
  awk -v label="$1" -v n="$n" -v wall="$(( (t1 - t0) / 1000 ))" -v floor="$floor" -v code="$code" 'BEGIN {
    printf "replay core %-22s %4d runs  wall %7.2f s  floor (tool calls) %6.2f s  ratio %5.2fx  (exit %d)\n",
      label, n, wall/1e6, floor/1e6, (floor > 0 ? wall/floor : 0), code }'
}
speed "--reuse-server" "--reuse-server"
speed "--reuse-server --parallel 2" "--reuse-server --parallel 2"
speed "(fresh server per run)" ""
speed "(fresh) --parallel 2" "--parallel 2"

# The demo's configuration: 5 recorded runs per scenario (490 runs), where
# the command's fixed costs (start-up, reports, stopping servers: about
# 0.1 s) weigh less than over 98 runs.
echo "recording the core stage 5 times (as make demo does)..."
"$B" --store "$tmp/store5" record --stage core --server "$tmp/reference.yaml" --model baseline --runs 5 --reuse-server >/dev/null 2>&1
speed "--reuse-server, x5" "--reuse-server" "$tmp/store5"
speed "(fresh), x5" "" "$tmp/store5"

echo "recording the core stage ${RSS_RUNS} times for the memory check..."
"$B" --store "$tmp/store-rss" record --stage core --server "$tmp/reference.yaml" --model baseline --runs "$RSS_RUNS" --reuse-server >/dev/null 2>&1
rss() { # label, selection flags
  local out code=0
  # shellcheck disable=SC2086
  /usr/bin/time -f "%M %e" -o "$tmp/time" "$B" --store "$tmp/store-rss" replay $2 --server "$tmp/reference.yaml" --reuse-server \
    --format json > /dev/null 2> "$tmp/err" || code=$?
  local n
  n=$(grep -c '^\[' "$tmp/err" || true)
  read -r kb secs <<< "$(tail -n 1 "$tmp/time")"
  echo "$n $kb"
  printf 'peak RSS %-26s %4d runs  %7.1f MB  %6.1f s  (exit %d)\n' "$1" "$n" "$(awk -v k="$kb" 'BEGIN{print k/1024}')" "$secs" "$code" >&2
}
small=$(rss "--suite client-diagnosis" "--suite client-diagnosis --config bench.yaml")
large=$(rss "--stage core" "--stage core")
read -r n1 kb1 <<< "$small"
read -r n2 kb2 <<< "$large"
awk -v a="$kb1" -v b="$kb2" -v n1="$n1" -v n2="$n2" 'BEGIN {
  printf "peak RSS %d -> %d runs: %+.0f%% (target: within 20%%)\n", n1, n2, 100*(b-a)/a }'

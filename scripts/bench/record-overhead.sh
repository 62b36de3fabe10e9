#!/usr/bin/env bash
# Harness overhead of `bench record` (issue 6): 50 runs with the baseline
# model against the reference server (5 smoke scenarios x 10 runs, one at a
# time), wall time vs. what the trace timings attribute to others:
#   start-up  launch + MCP handshake + tools/list (the "tools" event's time)
#   server    tool calls: the server's work plus the fake Central's
#   model     model turns (the offline baseline)
# over stdio and over streamable HTTP, each with a fresh server and fake per
# run and with --reuse-server.
# overhead = wall - start-up - server - model, reported against the run
# time without start-up. Target: overhead <= 10% of (wall - start-up).
#
# Then the same runs in one process (BenchmarkRecordOverhead in
# examples/central-mcp): the recorder and the store as bench record uses
# them, with the server as a child over stdio and with the server in process
# over a pipe (the in-memory transport), servers started before the timer.
# Needs jq or python3 to sum the trace timings.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RECORD_OVERHEAD_RUNS:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/bench" ./cmd/bench
CGO_ENABLED=0 go build -o "$tmp/central-mcp" ./examples/central-mcp
# The reference profile, running the prebuilt server (go run would add the
# go command's own start-up to every run).
sed "s|^command:.*|command: [\"$tmp/central-mcp\"]|" servers/reference.yaml > "$tmp/reference.yaml"
# The same server over streamable HTTP.
sed -e "s|^command:.*|command: [\"$tmp/central-mcp\", --transport, http, --addr, \"127.0.0.1:{port}\"]|" \
    -e "s|^transport:.*|transport: http\nurl: \"http://127.0.0.1:{port}/mcp\"\nready: \"http://127.0.0.1:{port}/readyz\"|" \
    servers/reference.yaml > "$tmp/reference-http.yaml"
scen="--scenario alerts-001 --scenario nac-001 --scenario firmware-001 --scenario config-compliance-001 --scenario adversarial-001"
measure() { # label, profile, extra flags
  local store="$tmp/store-$1"
  local t0 t1
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  "$tmp/bench" --store "$store" record $scen --server "$2" --model baseline --runs "$RUNS" $3 > "$tmp/out-$1" 2> "$tmp/err-$1"
  t1=$(date +%s%N)
  "$tmp/bench" --store "$store" traces show --json golden/ > "$tmp/runs-$1.json"
  local wall_us=$(( (t1 - t0) / 1000 ))
  local sums
  if command -v jq >/dev/null; then
    sums=$(jq -r '[length,
      ([.[].run.events[] | select(.kind=="mcp.tools") | .at_us] | add // 0),
      ([.[].run.events[] | select(.kind=="mcp.call") | .call.latency_us] | add // 0),
      ([.[].run.events[] | select(.kind=="model.turn") | .turn.latency_us] | add // 0)] | @tsv' "$tmp/runs-$1.json")
  else
    sums=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); ev=[e for r in d for e in r["run"]["events"]]
print(len(d), sum(e.get("at_us",0) for e in ev if e["kind"]=="mcp.tools"), sum(e["call"]["latency_us"] for e in ev if e["kind"]=="mcp.call"), sum(e["turn"]["latency_us"] for e in ev if e["kind"]=="model.turn"), sep="\t")' "$tmp/runs-$1.json")
  fi
  read -r n start server model <<< "$sums"
  awk -v label="$1" -v n="$n" -v wall="$wall_us" -v start="$start" -v server="$server" -v model="$model" 'BEGIN {
    run = wall - start; over = run - server - model
    printf "%-14s %d runs  wall %.2fs (%.1f ms/run)  start-up %.1f ms/run  server+fake %.1f ms/run  model %.2f ms/run\n", label, n, wall/1e6, wall/n/1e3, start/n/1e3, server/n/1e3, model/n/1e3
    printf "%-14s harness overhead %.1f ms/run = %.1f%% of the run time without start-up (target <= 10%%); server+fake/run-time ratio %.2f\n", label, over/n/1e3, 100*over/run, server/run
  }'
}
echo "bench record: 5 scenarios x $RUNS runs, baseline model, reference server (prebuilt)"
measure stdio "$tmp/reference.yaml" ""
measure stdio-reuse "$tmp/reference.yaml" "--reuse-server"
measure http "$tmp/reference-http.yaml" ""
measure http-reuse "$tmp/reference-http.yaml" "--reuse-server"
# The compared servers, where installed: RECORD_OVERHEAD_PROFILES lists
# profiles (e.g. "servers/karthik.yaml servers/secure-ssid.yaml"), each
# measured with --reuse-server.
for prof in ${RECORD_OVERHEAD_PROFILES:-}; do
  measure "$(basename "$prof" .yaml)-reuse" "$prof" "--reuse-server"
done
echo "in one process (go test -bench BenchmarkRecordOverhead, 5 scenarios x ${RUNS} runs, --reuse-server):"
go test -run '^$' -bench BenchmarkRecordOverhead -benchtime "$((RUNS * 5))x" ./examples/central-mcp | awk '/^BenchmarkRecordOverhead/ {
  for (i = 3; i < NF; i += 2) m[$(i+1)] = $i
  name = $1; sub(/^BenchmarkRecordOverhead\//, "", name); sub(/-[0-9]+$/, "", name)
  printf "%-14s wall %.2f ms/run  server+fake %.2f ms/run  model %.2f ms/run  harness overhead %.1f%% of the run time (target <= 10%%)\n",
    name, m["wall_ms/run"], m["server_ms/run"], m["model_ms/run"], m["overhead_%"] }'

#!/usr/bin/env bash
# Throughput, p99 and peak RSS of `bench fake serve --fixture campus` under
# GET /network-monitoring/v1/clients?limit=100 at 16 connections, compared
# with a plain net/http handler serving the same bytes in the same run.
# Targets: throughput ratio >= 0.5, peak RSS <= 150 MB.
set -euo pipefail
cd "$(dirname "$0")/../.."
DUR=${FAKE_LOAD_DURATION:-10s}
tmp=$(mktemp -d)
pid=""
cleanup() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi; rm -rf "$tmp"; }
trap cleanup EXIT
CGO_ENABLED=0 go build -o "$tmp/bench" ./cmd/bench
CGO_ENABLED=0 go build -o "$tmp/fakeload" ./fakecentral/internal/loadgen/fakeload
"$tmp/bench" fake serve --fixture campus --quiet > "$tmp/out" 2> "$tmp/err" &
pid=$!
for _ in $(seq 1 100); do grep -q '^BASE_URL=' "$tmp/out" 2>/dev/null && break; sleep 0.1; done
base=$(sed -n 's/^BASE_URL=//p' "$tmp/out")
[ -n "$base" ] || { echo "fake did not start"; cat "$tmp/err"; exit 4; }
"$tmp/fakeload" -base "$base" -c 16 -d "$DUR"
rss_kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")
echo "peak RSS of bench fake serve (campus): $((rss_kb / 1024)) MB (VmHWM ${rss_kb} kB; target <= 150 MB)"

#!/usr/bin/env bash
# Store size against zstd -19 (issue 14, item 6).
#
# Records the core stage STORE_RUNS times over (default "10 50": 2,200 and
# 11,000 runs with its 220 scenarios, 980 and 4,900 when it had 98;
# baseline model, reference server, --reuse-server) into a fresh store
# each, then compares every byte of the store's directory (pebble's own
# files included; no gc) with zstd -19 and gzip -9 of the same runs as
# JSON lines (bench traces show --json, one compact run per line).
# Target: the store at most 2x zstd -19. Also times loading one run
# (bench traces show of one ref, median of 5, the process's start-up
# included) as a sanity check of verify-on-read.
#
# Needs zstd and python3; says so and stops when they are missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
for c in zstd python3 gzip; do
  command -v "$c" >/dev/null || { echo "store-size: $c not found; skipped"; exit 0; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/bench" ./cmd/bench
CGO_ENABLED=0 go build -o "$tmp/central-mcp" ./examples/central-mcp
prof="$tmp/reference.yaml"
sed "s|^command:.*|command: [\"$tmp/central-mcp\"]|" servers/reference.yaml > "$prof"
B="$tmp/bench"
for n in ${STORE_RUNS:-10 50}; do
  s="$tmp/store-$n"
  "$B" --store "$s" record --stage core --server "$prof" --model baseline --runs "$n" --reuse-server > /dev/null 2>&1
  disk=$(du -sb "$s" | cut -f1)
  "$B" --store "$s" traces show --json golden/ > "$tmp/runs.json"
  python3 -c 'import json,sys
with open(sys.argv[2], "w") as f:
    for r in json.load(open(sys.argv[1])):
        f.write(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n")' "$tmp/runs.json" "$tmp/runs.jsonl"
  runs=$(wc -l < "$tmp/runs.jsonl")
  raw=$(wc -c < "$tmp/runs.jsonl")
  z19=$(zstd -19 -q -c "$tmp/runs.jsonl" | wc -c)
  gz=$(gzip -9 -c "$tmp/runs.jsonl" | wc -c)
  ref=$("$B" --store "$s" traces ls | tail -n 1 | awk '{print $2}')
  for _ in 1 2 3 4 5; do
    t0=$(date +%s%N); "$B" --store "$s" traces show "$ref" > /dev/null; t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000 ))
  done | sort -n | sed -n 3p > "$tmp/load"
  awk -v runs="$runs" -v raw="$raw" -v disk="$disk" -v z="$z19" -v gz="$gz" -v load="$(cat "$tmp/load")" 'BEGIN {
    printf "%5d runs: JSON lines %6.1f MB; store %8d B = %.2fx zstd -19 (%d B), %.2fx gzip -9 (%d B); target <= 2x; traces show of one run %.1f ms\n",
      runs, raw/1e6, disk, disk/z, z, disk/gz, gz, load/1000 }'
done

#!/usr/bin/env bash
# Binary size (issue 14, item 9): the release build (make build: -trimpath
# -s -w) against the 40 MB target, with the unstripped build beside it.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$tmp/stripped" ./cmd/bench
CGO_ENABLED=0 go build -o "$tmp/plain" ./cmd/bench
s=$(wc -c < "$tmp/stripped"); p=$(wc -c < "$tmp/plain")
awk -v s="$s" -v p="$p" 'BEGIN { printf "binary: release build %.1f MB (%.2fx the 40 MB target), unstripped %.1f MB\n", s/1e6, s/40e6, p/1e6 }'

#!/usr/bin/env bash
# Binary size (issue 14, item 9): the release build (make build: -trimpath
# -s -w) against the 40 MB target, with the unstripped build beside it, and
# what the two official model SDKs cost by themselves: a program that only
# imports bench's llm package, against one that also imports its OpenAI and
# Anthropic providers (each SDK's package init registers every type of its
# whole API, so the linker keeps them all whether bench uses them or not).
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build() { CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$@"; }
build "$tmp/stripped" ./cmd/bench
CGO_ENABLED=0 go build -o "$tmp/plain" ./cmd/bench
mkdir -p "$tmp/llm" "$tmp/sdks"
printf 'package main\n\nimport _ "github.com/mcpbench/bench/llm"\n\nfunc main() {}\n' > "$tmp/llm/main.go"
printf 'package main\n\nimport (\n\t_ "github.com/mcpbench/bench/llm"\n\t_ "github.com/mcpbench/bench/llm/anthropic"\n\t_ "github.com/mcpbench/bench/llm/openai"\n)\n\nfunc main() {}\n' > "$tmp/sdks/main.go"
build "$tmp/llm.bin" "$tmp/llm/main.go"
build "$tmp/sdks.bin" "$tmp/sdks/main.go"
s=$(wc -c < "$tmp/stripped"); p=$(wc -c < "$tmp/plain")
l=$(wc -c < "$tmp/llm.bin"); k=$(wc -c < "$tmp/sdks.bin")
awk -v s="$s" -v p="$p" -v l="$l" -v k="$k" 'BEGIN {
	printf "binary: release build %.1f MB (%.2fx the 40 MB target), unstripped %.1f MB\n", s/1e6, s/40e6, p/1e6
	printf "binary: the OpenAI and Anthropic SDKs by themselves %.1f MB; bench without them %.1f MB (%.2fx the 40 MB target)\n", (k-l)/1e6, (s-k+l)/1e6, (s-k+l)/40e6
}'

#!/usr/bin/env bash
# Installs the third-party MCP servers bench's recorder tests run against
# (servers nobody here wrote), from npm, into .cache/npm (git-ignored):
#   @modelcontextprotocol/server-everything   stdio and streamable HTTP
#   @modelcontextprotocol/server-filesystem   stdio
# Versions are pinned. After this, the tests need no network. Without
# Node.js the script says so and exits 0: the tests then skip with a message.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.cache/npm
EVERYTHING=2026.8.31
FILESYSTEM=2026.8.31
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-test-servers: Node.js/npm not found; the npm server tests will skip" >&2
  exit 0
fi
want="everything@$EVERYTHING filesystem@$FILESYSTEM"
if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$want" ]; then
  echo "install-test-servers: $want already in $dir"
  exit 0
fi
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || printf '{"name":"bench-test-servers","private":true}\n' > package.json
npm install --no-audit --no-fund --save-exact \
  "@modelcontextprotocol/server-everything@$EVERYTHING" \
  "@modelcontextprotocol/server-filesystem@$FILESYSTEM"
echo "$want" > .installed
echo "install-test-servers: installed $want in $dir"

#!/usr/bin/env bash
# Installs the third-party MCP servers bench's recorder tests run against
# (servers nobody here wrote), from npm, into .cache/npm (git-ignored):
#   @modelcontextprotocol/server-everything   stdio and streamable HTTP
#   @modelcontextprotocol/server-filesystem   stdio
# and the official Python MCP SDK (mcp, from PyPI) into .cache/pyvenv, for
# the Python server of cmd/bench/testdata/pyserver (a server bench has never
# seen, not written in Go). Versions are pinned. After this, the tests need
# no network. Without Node.js, or Python's venv, the script says so and goes
# on: those tests then skip with a message.
set -euo pipefail
cd "$(dirname "$0")/.."

# The Python SDK, in its own virtual environment.
PYMCP=2.3.0
venv=.cache/pyvenv
if [ -f "$venv/.installed" ] && [ "$(cat "$venv/.installed")" = "mcp==$PYMCP" ]; then
  echo "install-test-servers: mcp==$PYMCP already in $venv"
elif command -v python3 >/dev/null && python3 -m venv "$venv" >/dev/null 2>&1 &&
  "$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$PYMCP"; then
  echo "mcp==$PYMCP" > "$venv/.installed"
  echo "install-test-servers: installed mcp==$PYMCP in $venv"
else
  echo "install-test-servers: no Python venv with mcp==$PYMCP; the Python server test will skip" >&2
fi

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

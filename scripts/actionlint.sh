#!/usr/bin/env bash
# Lints the workflows and the composite action (action.yml, used by
# .github/workflows/benchmark.yml as uses: ./) with actionlint, built once
# into .cache/bin at a pinned version.
set -euo pipefail
cd "$(dirname "$0")/.."
version=v1.7.12
bin=.cache/bin/actionlint-$version
if [ ! -x "$bin" ]; then
  mkdir -p .cache/bin
  if ! GOBIN="$PWD/.cache/gobin" go install "github.com/rhysd/actionlint/cmd/actionlint@$version" 2>.cache/actionlint-install.log; then
    echo "note: could not build actionlint $version (see .cache/actionlint-install.log): workflows not linted" >&2
    exit 0
  fi
  mv .cache/gobin/actionlint "$bin"
fi
"$bin"
echo "actionlint $version: workflows and action.yml clean"

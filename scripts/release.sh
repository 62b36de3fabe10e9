#!/usr/bin/env bash
# make release: bench's release binaries, stripped and versioned, with their
# checksums.
#
#   scripts/release.sh            build every target into dist/ and write
#                                 dist/SHA256SUMS (then check it)
#   scripts/release.sh --check    what make test runs: build this machine's
#                                 binary and type-check darwin/arm64 (no
#                                 link): a file that does not compile off
#                                 Linux (the sandbox's stub) fails here, not
#                                 on a tag; CHECK_TARGETS overrides
#
# Targets: linux and darwin, amd64 and arm64 (TARGETS overrides, as
# "os/arch ..."). VERSION defaults to git describe, as make build's. The
# binaries are static (CGO_ENABLED=0) and reproducible (-trimpath; no build
# id). A user installs with `go install github.com/mcpbench/bench/cmd/bench@VERSION`
# or one of these binaries; `bench version` says which.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
TARGETS=${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
DIST=${DIST:-dist}
export CGO_ENABLED=0
flags=(-trimpath -ldflags "-s -w -buildid= -X main.version=$VERSION")

if [ "${1:-}" = "--check" ]; then
	host=$(go env GOOS)/$(go env GOARCH)
	for t in $host ${CHECK_TARGETS:-darwin/arm64}; do
		os=${t%/*} arch=${t#*/}
		if [ "$t" = "$host" ]; then
			GOOS=$os GOARCH=$arch go build "${flags[@]}" -o /dev/null ./cmd/bench
			echo "release: $t builds"
		else
			GOOS=$os GOARCH=$arch go vet ./cmd/bench/... ./internal/... ./recorder/...
			echo "release: $t type-checks"
		fi
	done
	exit 0
fi

rm -rf "$DIST"
mkdir -p "$DIST"
for t in $TARGETS; do
	os=${t%/*} arch=${t#*/}
	out="$DIST/bench-$VERSION-$os-$arch"
	GOOS=$os GOARCH=$arch go build "${flags[@]}" -o "$out" ./cmd/bench
	echo "release: $out ($(( $(wc -c < "$out") / 1048576 )) MB)"
done
(cd "$DIST" && sha256sum bench-* > SHA256SUMS && sha256sum -c --quiet SHA256SUMS)
echo "release: $DIST/SHA256SUMS"

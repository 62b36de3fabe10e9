#!/usr/bin/env bash
# Builds libfaketime 0.9.12 into .cache/libfaketime (git-ignored) when the
# system's is older than 0.9.11 or absent, and prints the library's path.
#
# Debian 12 and Ubuntu 24.04 ship 0.9.10, under which bench pins Node
# servers only: 0.9.10 mistranslates clock_nanosleep on the real monotonic
# clock, so Python's time.sleep fails (docs/clock.md). The source is Debian's
# own (sid's faketime_0.9.12.orig.tar.gz, checked against its SHA-256); the
# build takes a second and needs make and a C compiler. Point bench at the
# result with BENCH_LIBFAKETIME=<path>; `make test` does so for the tests.
# Prints nothing and exits 0 when the system's libfaketime is new enough or
# the build is not possible (the tests then skip with a message).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=0.9.12
SHA256=4fc32218697c052adcdc5ee395581f2554ca56d086ac817ced2be0d6f1f8a9fa
URL=http://deb.debian.org/debian/pool/main/f/faketime/faketime_$VERSION.orig.tar.gz
dir=.cache/libfaketime
lib=$dir/libfaketime.so.1
note() { echo "build-libfaketime: $*" >&2; }

for sys in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1; do
  if [ -e "$sys" ] && nm -D "$sys" 2>/dev/null | grep -q sem_clockwait; then
    exit 0 # 0.9.11 or later: the system's will do
  fi
done
if [ -f "$lib" ] && [ "$(cat "$dir/.version" 2>/dev/null)" = "$VERSION" ]; then
  echo "$PWD/$lib"
  exit 0
fi
for c in curl make cc tar sha256sum; do
  command -v "$c" >/dev/null || { note "$c not found; not built"; exit 0; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! curl -sfL --max-time 60 -o "$tmp/src.tar.gz" "$URL"; then
  note "could not download $URL; not built"
  exit 0
fi
if ! echo "$SHA256  $tmp/src.tar.gz" | sha256sum -c --status; then
  note "$URL does not have the expected SHA-256; not built"
  exit 0
fi
tar xzf "$tmp/src.tar.gz" -C "$tmp"
if ! make -C "$tmp/libfaketime-$VERSION/src" libfaketime.so.1 >"$tmp/build.log" 2>&1; then
  note "build failed; not built:"; tail -5 "$tmp/build.log" >&2
  exit 0
fi
mkdir -p "$dir"
cp "$tmp/libfaketime-$VERSION/src/libfaketime.so.1" "$lib"
echo "$VERSION" > "$dir/.version"
note "built libfaketime $VERSION in $lib"
echo "$PWD/$lib"

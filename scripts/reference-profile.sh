#!/usr/bin/env bash
# servers/reference.yaml for a built reference server: the profile with its
# command replaced by BINARY [ARGS...] and its cwd by bench's checkout,
# printed to standard output. The demos and the model-in-the-loop test use
# it so that each run does not compile the server again (go run).
#
#   scripts/reference-profile.sh BINARY [ARGS...] > FILE
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
argv="\"${1:?usage: scripts/reference-profile.sh BINARY [ARGS...]}\""
shift
for a in "$@"; do argv="$argv, \"$a\""; done
sed -e "s|^command: .*|command: [$argv]|" -e "s|^cwd: .*|cwd: $root|" "$root/servers/reference.yaml"

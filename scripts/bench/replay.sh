#!/usr/bin/env bash
# Replay and record speed against the fair floor, and replay memory.
#
# The fair floor (scripts/bench/floor) sends the same tool calls as bench
# with a minimal go-sdk client to the same server (the reference server,
# prebuilt) and fake Central, started the same way (fresh per run with the
# next run's pair starting while a run executes, or one per fixture and
# write gate with the fake reset between runs; in bench's kernel sandbox
# where bench runs its servers in one, --isolation auto, and unconfined
# beside bench --isolation proxy), with no model, store or scoring.
# Measured in this one run, FLOOR_REPS times each, floor and bench
# interleaved so that the machine's noise hits both:
#   bench replay --stage core, with --reuse-server and fresh, over the runs
#     recorded once per scenario (220 in the core stage) and FLOOR_BIG_RUNS
#     times (2,200);
#   bench record --stage core --runs 1, with --reuse-server and fresh,
#     against the floor of the calls that recording made;
#   the first row again with every core also busy with a loop of other
#     work (floor and bench alike): bench must not fall apart where the
#     floor does not.
# Each row: wall time of bench (the whole process, measured outside it) over
# the floor's (its timed part: the input is read before its clock), and
# the span ratio: bench's span of its runs (from its first run's start to
# its last run stored and scored, --stats) over the same floor time, the
# runs alone on both sides, bench's fixed cost (below) held to its own bar;
# bench's own CPU per run, (bench CPU - floor CPU) / runs: CPU is each
# process's getrusage(RUSAGE_SELF) (bench --stats), servers excluded, the
# fake Central (in process in both) included in both; and bench's fixed
# cost, its wall time less the span of its runs (from its start to its
# first run, and from its last run's end to its exit, the process's own
# start-up and exit included). min/median/max.
# A second table splits each row's time per run: in the tool calls (bench
# times each in its trace, the floor around each) and the rest (bench's own
# path between calls, or the floor's).
# Targets (the issue set them at 98 and 980 runs, the core stage then):
# replay --reuse-server <= 1.2x over one run a scenario and <= 1.3x over ten;
# fresh replay and record <= 1.2x; bench's CPU <= 1 ms per replayed run;
# fixed cost <= 100 ms. The wall ratio holds the fixed cost and the floor's
# timed part does not hold the floor's (its start-up, its input, its
# sandbox): over a few hundred milliseconds of runs (98 runs: about 0.25 s
# of floor) the fixed cost the issue allows is alone 0.4x, so a ratio and
# that bar can both hold only over the runs: the span ratio is that ratio,
# and the wall ratio is printed beside it.
# The fresh replay is measured with the kernel sandbox (the default where
# the kernel allows it), against a floor whose servers start in the same
# sandbox, and, over the small store, without it (--isolation proxy)
# against a floor whose servers start unconfined. bench exits 1 on these
# stores: the gate's absolute bars (task success >= 0.80) fail for the
# baseline model, and a fresh replay of a --reuse-server recording also
# counts each server's token fetch, which a reused server did once.
#
# Memory: peak RSS of bench replay --reuse-server over one suite of the
# ten-run store and over all of it. Target: within 20%.
#
# A replay with a run that ended in an error keeps its stderr and those
# runs' traces, and a floor that failed its stderr, in KEEP_DIR (default
# $TMPDIR/replay-sh-errors); the script says where.
# The replays write the JSON report (--format json), which holds every
# run's metrics (6.4 MB over 2,200 runs); the row replay-reuse-big-text is
# the large reused replay again with the default text report, whose end
# does not grow with the runs.
# FLOOR_REPS (default 3) and FLOOR_BIG_RUNS (default 10) override the counts;
# FLOOR_ROWS, a list of row ids (replay-reuse-1 replay-reuse-loaded
# replay-fresh-1 replay-fresh-proxy-1 replay-reuse-big replay-reuse-big-text
# replay-fresh-big record-reuse record-fresh), measures those rows alone; LOAD_PROCS (default
# one a core) sets how many busy loops the loaded row runs beside floor and
# bench.
# Needs /usr/bin/time for RSS, and jq or python3 for the call-count check.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${FLOOR_REPS:-3}
BIG=${FLOOR_BIG_RUNS:-10}
ALL="replay-reuse-1 replay-reuse-loaded replay-reuse-big replay-reuse-big-text replay-fresh-1 replay-fresh-proxy-1 replay-fresh-big record-reuse record-fresh"
ROWS=${FLOOR_ROWS:-$ALL}
for r in $ROWS; do
  case " $ALL " in *" $r "*) ;; *) echo "FLOOR_ROWS: no row $r (rows: $ALL)" >&2; exit 2 ;; esac
done
want() { case " $ROWS " in *" $1 "*) return 0 ;; esac; return 1; } # row id
tmp=$(mktemp -d)
hogs=()
trap 'rm -rf "$tmp"; [ ${#hogs[@]} = 0 ] || kill "${hogs[@]}" 2>/dev/null' EXIT
CGO_ENABLED=0 go build -o "$tmp/bench" ./cmd/bench
CGO_ENABLED=0 go build -o "$tmp/central-mcp" ./examples/central-mcp
CGO_ENABLED=0 go build -o "$tmp/floor" ./scripts/bench/floor
# The reference profile, running the prebuilt server (go run would add the
# go command's own start-up to every run).
prof="$tmp/reference.yaml"
sed "s|^command:.*|command: [\"$tmp/central-mcp\"]|" servers/reference.yaml > "$prof"
B="$tmp/bench"
CORE="--stage core --server $prof"

num() { sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$1"; } # file, key -> integer
now_us() { echo $(( $(date +%s%N) / 1000 )); }
# What timing a process costs the shell (two dates, a fork and exec): the
# median of timing /bin/true five times, taken off each fixed cost.
shell_us=$(for _ in 1 2 3 4 5; do t0=$(now_us); /bin/true; t1=$(now_us); echo $((t1 - t0)); done | sort -n | sed -n 3p)
calls_of() { # traces show --json file -> tool calls sent to the server
  local f='[.[].run.events[] | select(.kind=="mcp.call" and (.call.invalid // "") == "" and .call.tool != "submit_result")] | length'
  if command -v jq >/dev/null; then jq "$f" "$1"
  elif command -v python3 >/dev/null; then python3 -c 'import json,sys
print(sum(1 for r in json.load(open(sys.argv[1])) for e in r["run"]["events"] if e["kind"]=="mcp.call" and not e["call"].get("invalid") and e["call"]["tool"]!="submit_result"))' "$1"
  else echo "?"; fi
}

# floor_run runs-file flags [isolation]: one floor measurement; its
# servers confined as bench's default confines them (auto), or not (none).
# A floor that fails (a tool call past its 60 s timeout happened once in
# some 20 runs of 2,200 fresh servers, 2026-12-05) is said and measured
# again, once.
floor_run() {
  # shellcheck disable=SC2086
  if ! "$tmp/floor" --runs "$1" --server "$prof" --isolation "${3:-auto}" $2 > "$tmp/floor.json" 2> "$tmp/floor.err"; then
    echo "    the floor failed, measured again: $(tail -n 1 "$tmp/floor.err")"
    mkdir -p "${KEEP_DIR:-${TMPDIR:-/tmp}/replay-sh-errors}"
    cp "$tmp/floor.err" "${KEEP_DIR:-${TMPDIR:-/tmp}/replay-sh-errors}/floor-$(date +%H%M%S).err"
    # shellcheck disable=SC2086
    "$tmp/floor" --runs "$1" --server "$prof" --isolation "${3:-auto}" $2 > "$tmp/floor.json"
  fi
}
# row id code bench-wall-us: a measured pair, from the floor's line and
# bench's --stats, added to the rows of id.
row() {
  local fw fc bc runs calls
  fw=$(num "$tmp/floor.json" wall_us)
  fc=$(( $(num "$tmp/floor.json" cpu_user_us) + $(num "$tmp/floor.json" cpu_sys_us) ))
  bc=$(( $(num "$tmp/stats.json" cpu_user_us) + $(num "$tmp/stats.json" cpu_sys_us) ))
  runs=$(num "$tmp/floor.json" runs)
  calls=$(num "$tmp/floor.json" calls)
  # bench's fixed cost: from its start to its first run, and from its last
  # run's end (stored, scored) to its exit: its wall time as measured here,
  # less the span of its runs (--stats) and the shell's own cost of timing
  # a process (shell_us). The process's start (the runtime and the
  # packages' initialization, before bench's clock) and its exit are in it.
  local fixed
  fixed=$(( $3 - ($(num "$tmp/stats.json" last_run_us) - $(num "$tmp/stats.json" first_run_us)) - shell_us ))
  local iso
  iso=$(sed -n 's/.*"isolation":"\([a-z]*\)".*/\1/p' "$tmp/floor.json")
  # Where a run's time goes: in tool calls (bench and the floor time each
  # call), and the rest of the span of the runs (bench: first run's start
  # to last run's end; the floor: its timed part).
  local fcalls bcalls span
  fcalls=$(num "$tmp/floor.json" calls_us)
  bcalls=$(num "$tmp/stats.json" calls_us)
  span=$(( $(num "$tmp/stats.json" last_run_us) - $(num "$tmp/stats.json" first_run_us) ))
  echo "$runs $calls $fw $3 $fc $bc $2 $fixed ${iso:-none} ${fcalls:-0} ${bcalls:-0} $span" >> "$tmp/rows-$1"
}

# keep_errors id store code: a replay with a run that ended in an error
# (such as a tool call past bench's timeout, which the replays of an
# unchanged server never have) keeps its stderr and the error runs' traces
# in $KEEP_DIR (default: $TMPDIR/replay-sh-errors), and says so: the
# temporary directory goes at the end. One that exited with another code
# than 0 or 1 (5: inconclusive, a run that could not be scored) keeps its
# store too: on 2026-12-06 such a replay (a call that waited 60 s) named
# no run on its stderr, and the script kept nothing.
keep_errors() {
  local dir
  case ${3:-0} in 0 | 1) grep -q ': error' "$tmp/err" || return 0 ;; esac
  dir="${KEEP_DIR:-${TMPDIR:-/tmp}/replay-sh-errors}/$1-$(date +%H%M%S)"
  mkdir -p "$dir"
  cp "$tmp/err" "$dir/stderr"
  case ${3:-0} in 0 | 1) ;; *) cp -r "$2" "$dir/store" ;; esac
  { grep ': error' "$tmp/err" || true; } | sed 's/^\[[0-9/]*\] \(.*\): error.*/replay\/\1/' | while read -r ref; do
    "$B" --store "$2" traces show "$ref" >> "$dir/runs.txt" 2>&1 || true
  done
  echo "    a replay had runs that ended in an error, or exited $3: its stderr and their traces (or its store) are in $dir"
}

# load_start starts LOAD_PROCS (default: one a core) busy loops at the
# default priority, for a loaded row's floor and bench alike; load_stop
# stops them. bench must stay near the floor on a machine that is busy
# with other work too: a thread of its own at a low priority (nice 19) once
# made such a replay 10x slower (2026-12-05).
load_start() {
  local i
  for i in $(seq "${LOAD_PROCS:-$(nproc)}"); do
    sh -c 'while :; do :; done' &
    hogs+=($!)
  done
}
load_stop() {
  kill "${hogs[@]}" 2>/dev/null
  wait "${hogs[@]}" 2>/dev/null || true
  hogs=()
}

# replay_pairs id store runs-file flags [rss] [bench-flags] [floor-isolation]:
# with rss, bench's peak RSS goes to $tmp/rss-<id> (/usr/bin/time; its own
# start-up is well under a millisecond of the wall time); bench-flags go to
# bench alone, floor-isolation (default auto) to the floor.
replay_pairs() {
  local code t0 t1 time=() format="--format json"
  want "$1" || return 0
  case $1 in *-text) format="" ;; esac # the default report: text
  echo "  $1"
  [ -z "${5:-}" ] || time=(/usr/bin/time -f "%M" -o "$tmp/rss-$1")
  for _ in $(seq "$REPS"); do
    case $1 in *-loaded) load_start ;; esac
    floor_run "$3" "$4" "${7:-auto}"
    code=0
    t0=$(now_us)
    # shellcheck disable=SC2086
    "${time[@]}" "$B" --store "$2" --stats "$tmp/stats.json" replay $CORE --latency-resolution 1us $format $4 ${6:-} \
      > /dev/null 2> "$tmp/err" || code=$?
    t1=$(now_us)
    grep -q '^replayed ' "$tmp/err" || { echo "bench replay failed ($1):"; tail -n 5 "$tmp/err"; exit 1; }
    case $1 in *-loaded) load_stop ;; esac
    keep_errors "$1" "$2" "$code"
    row "$1" "$code" $((t1 - t0))
  done
}

# record_pairs id flags: bench record then the floor of what it sent.
record_pairs() {
  local code t0 t1 i store
  want "$1" || return 0
  echo "  $1"
  for i in $(seq "$REPS"); do
    store="$tmp/rec-$1-$i"
    code=0
    t0=$(now_us)
    # shellcheck disable=SC2086
    "$B" --store "$store" --stats "$tmp/stats.json" record $CORE --model baseline --runs 1 $2 \
      > /dev/null 2> "$tmp/err" || code=$?
    t1=$(now_us)
    [ "$code" = 0 ] || { echo "bench record failed ($1):"; tail -n 5 "$tmp/err"; exit 1; }
    if [ "$i" = 1 ]; then "$B" --store "$store" traces show --json golden/ > "$tmp/rec-$1.json"; fi
    rm -rf "$store"
    floor_run "$tmp/rec-$1.json" "$2"
    row "$1" "$code" $((t1 - t0))
  done
}

echo "recording the core stage once and ${BIG} times (baseline model, reference server, --reuse-server)..."
sizes=1
if want replay-reuse-big || want replay-reuse-big-text || want replay-fresh-big; then sizes="1 big"; fi
for s in $sizes; do
  n=1; [ "$s" = 1 ] || n=$BIG
  "$B" --store "$tmp/s$s" record $CORE --model baseline --runs "$n" --reuse-server > /dev/null 2>&1
  "$B" --store "$tmp/s$s" traces show --json golden/ > "$tmp/runs$s.json"
done

echo "measuring ${REPS} times each, floor and bench interleaved..."
replay_pairs replay-reuse-1 "$tmp/s1" "$tmp/runs1.json" "--reuse-server"
# The same with every core busy with other work as well (load_start).
replay_pairs replay-reuse-loaded "$tmp/s1" "$tmp/runs1.json" "--reuse-server"
# Fresh servers for runs recorded with reused ones: bench is told so
# (without a flag it replays as recorded).
replay_pairs replay-fresh-1 "$tmp/s1" "$tmp/runs1.json" "" "" "--reuse-server=false"
# The same without the kernel sandbox, against a floor without it: bench's
# overhead where neither pays for namespaces.
replay_pairs replay-fresh-proxy-1 "$tmp/s1" "$tmp/runs1.json" "" "" "--isolation proxy --reuse-server=false" none
replay_pairs replay-reuse-big "$tmp/sbig" "$tmp/runsbig.json" "--reuse-server" rss
replay_pairs replay-reuse-big-text "$tmp/sbig" "$tmp/runsbig.json" "--reuse-server"
replay_pairs replay-fresh-big "$tmp/sbig" "$tmp/runsbig.json" "" "" "--reuse-server=false"
record_pairs record-reuse "--reuse-server"
record_pairs record-fresh ""

# The floor sends what bench sends: the calls of the last replays.
for s in $sizes; do
  "$B" --store "$tmp/s$s" traces show --json replay/ > "$tmp/replayed.json" 2> /dev/null || continue
  echo "tool calls sent over the store of ${s}x: floor $(calls_of "$tmp/runs$s.json"), bench replay $(calls_of "$tmp/replayed.json")"
done

mmm() { sort -g | awk '{v[NR]=$1} END {printf "%.2f/%.2f/%.2f", v[1], v[int((NR+1)/2)], v[NR]}'; }
echo
echo "against the fair floor (scripts/bench/floor: the same calls, server and fake; fresh servers"
echo "started while the run before executes, as bench does; its servers in bench's kernel sandbox"
echo "(floor: kernel) where bench runs them in one); ${REPS} measurements each"
printf '%-22s %5s %5s  %-17s  %-17s  %-17s  %-17s  %-20s  %s\n' "" runs calls "floor wall s" "bench/floor wall" "bench/floor span" "bench CPU ms/run" "fixed cost ms" "target"
printf '%-22s %5s %5s  %-17s  %-17s  %-17s  %-17s  %-20s\n' "" "" "" "min/median/max" "min/median/max" "min/median/max" "min/median/max" "min/median/max"
for id in $ALL; do
  want "$id" || continue
  f="$tmp/rows-$id"
  case $id in
    replay-reuse-1) label="replay --reuse-server" target="<= 1.2x, <= 1 ms, fixed <= 100 ms" ;;
    replay-reuse-loaded) label="  cores loaded" target="(every core busy with other work: bench near the floor)" ;;
    replay-reuse-big) label="replay --reuse-server" target="<= 1.3x, <= 1 ms, fixed <= 100 ms" ;;
    replay-reuse-big-text) label="  text report" target="(the default report: fixed <= 100 ms)" ;;
    replay-fresh-proxy-1) label="  --isolation proxy" target="(no sandbox, floor unconfined)" ;;
    replay-fresh-*) label="replay (fresh)" target="<= 1.2x, <= 1 ms, fixed <= 100 ms" ;;
    record-reuse) label="record --reuse-server" target="<= 1.2x" ;;
    record-fresh) label="record (fresh)" target="<= 1.2x" ;;
  esac
  read -r runs calls _ _ _ _ _ _ iso _ < "$f"
  fwall=$(awk '{print $3/1e6}' "$f" | mmm)
  ratio=$(awk '{print $4/$3}' "$f" | mmm)
  spanr=$(awk '{print $12/$3}' "$f" | mmm)
  cpu=$(awk '{print ($6-$5)/$1/1e3}' "$f" | mmm)
  fixed=$(awk '{print $8/1e3}' "$f" | mmm)
  codes=$(awk '$7 != 0 {c[$7]++} END {for (k in c) printf "  (bench exit %s: %d of them)", k, c[k]}' "$f")
  printf '%-22s %5d %5d  %-17s  %-17s  %-17s  %-17s  %-20s  %s%s\n' "$label" "$runs" "$calls" "$fwall" "$ratio" "$spanr" "$cpu" "$fixed" "$target (floor: $iso)" "$codes"
done
echo
echo "where a run's time goes (ms per run, min/median/max): in its tool calls (each timed from"
echo "sending it to its result; bench's own checks of the arguments and the result included), and"
echo "the rest (bench: the span of its runs less their calls, its own path between the calls and"
echo "the last run's storing and scoring; the floor: its timed part less its calls)"
printf '%-22s  %-17s  %-17s  %-17s  %-17s\n' "" "calls: floor" "calls: bench" "rest: floor" "rest: bench"
for id in $ALL; do
  want "$id" || continue
  f="$tmp/rows-$id"
  case $id in
    replay-reuse-1) label="replay --reuse-server" ;;
    replay-reuse-loaded) label="  cores loaded" ;;
    replay-reuse-big) label="  (10x)" ;;
    replay-reuse-big-text) label="  (10x, text)" ;;
    replay-fresh-proxy-1) label="  --isolation proxy" ;;
    replay-fresh-1) label="replay (fresh)" ;;
    replay-fresh-big) label="  (10x)" ;;
    record-reuse) label="record --reuse-server" ;;
    record-fresh) label="record (fresh)" ;;
  esac
  printf '%-22s  %-17s  %-17s  %-17s  %-17s\n' "$label" \
    "$(awk '{print $10/$1/1e3}' "$f" | mmm)" "$(awk '{print $11/$1/1e3}' "$f" | mmm)" \
    "$(awk '{print ($3-$10)/$1/1e3}' "$f" | mmm)" "$(awk '{print ($12-$11)/$1/1e3}' "$f" | mmm)"
done
echo

# Memory over ~100 and ~1,000 runs: one suite of the large store, then all
# of it (the last --reuse-server replay above).
want replay-reuse-big || exit 0
/usr/bin/time -f "%M" -o "$tmp/rss-small" "$B" --store "$tmp/sbig" replay --suite client-diagnosis \
  --server "$prof" --reuse-server --latency-resolution 1us --format json > /dev/null 2> "$tmp/err" || true
n1=$(grep -c '^\[' "$tmp/err" || true)
read -r n2 _ < "$tmp/rows-replay-reuse-big"
awk -v a="$(tail -n 1 "$tmp/rss-small")" -v b="$(tail -n 1 "$tmp/rss-replay-reuse-big")" -v n1="$n1" -v n2="$n2" 'BEGIN {
  printf "peak RSS of bench replay --reuse-server: %d runs (--suite client-diagnosis) %.1f MB, %d runs (--stage core) %.1f MB: %+.0f%% (target: within 20%%)\n",
    n1, a/1024, n2, b/1024, 100*(b-a)/a }'

#!/usr/bin/env bash
# hello's throughput and latency in `plugboard serve` alone, and beside 100 connections
# calling a plugin that hangs or one that spins (each plugin's bulkhead, docs/serve.md):
#   ./bench/bulkhead_bench.sh [seconds per run, default 10]
# Side by side in one run, in turn, ROUNDS rounds (default 3); the table gives each row's
# median over the rounds. Each row gets a fresh serve, so that threads a bad plugin left
# hanging or spinning do not weigh on the next row. hello is driven by wrk at
# HELLO_CONNECTIONS (default 16) connections, every request a new call (its own workflow
# uid), as Argo's traffic is. The bad plugin is tests/fixtures/crashy.so: "hang" sleeps
# 600 s ignoring its cancellation, "spin" burns CPU until the process ends. Its 100
# connections (wrk too, each request a new call) wait 1 s after a refusal before the next,
# as Argo's agent does after its first 503 (its backoff starts at 1 s), and start 2 s
# before hello is measured. Installs wrk (Debian package) when missing.
# Environment: BUILD_DIR=DIR the build (default build); SKIP_SETUP=1 does not build first;
#   SERVE_ARGS further arguments for serve; BASELINE=FILE another plugboard binary (an older
#   build, finding its deployers in a `deployers` directory beside it), measured in turn
#   with this one, its rows marked "(baseline)".
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
build=${BUILD_DIR:-build}
rounds=${ROUNDS:-3}
hello_connections=${HELLO_CONNECTIONS:-16}
if ! command -v wrk >/dev/null; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq wrk >/dev/null
fi
[ -n "${SKIP_SETUP:-}" ] || ./tools/setup.sh >/dev/null

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -m 0700 "$work/plugins"
cp "$build/plugins/hello.so" "$build/tests/fixtures/crashy.so" "$work/plugins/"

# Every request a new call: the workflow uid is the run, the wrk thread and the count.
lua() {  # file key args-json back-off-after-503
  cat > "$1" <<LUA
wrk.method = "POST"
wrk.body = '{"workflow":{"metadata":{"name":"wf","namespace":"argo","uid":"1"}},"template":{"name":"t","plugin":{"$2":$3}}}'
wrk.headers["Content-Type"] = "application/json"
LUA
  cat bench/distinct_calls.lua >> "$1"
  if [ "$4" = 1 ]; then
    cat >> "$1" <<'LUA'
local wait = 0
function response(status) if status == 503 then wait = 1000 else wait = 0 end end
function delay() return wait end
LUA
  fi
}
lua "$work/hello.lua" hello '{"name":"bench"}' 0
lua "$work/hang.lua" crashy '{"sleep_ms":600000}' 1
lua "$work/spin.lua" crashy '{"crash":"spin"}' 1

runs=0
# serve BINARY: starts it, sets serve_pid and port.
serve() {
  # shellcheck disable=SC2086  # SERVE_ARGS is meant to split
  "$1" serve --plugins "$work/plugins" --listen 127.0.0.1:0 --no-watch --log-level off ${SERVE_ARGS:-} > "$work/serve.out" &
  serve_pid=$!
  pids+=("$serve_pid")
  for _ in $(seq 400); do grep -q "http://" "$work/serve.out" 2>/dev/null && break; sleep 0.05; done
  port=$(grep -o '127.0.0.1:[0-9]*' "$work/serve.out" | head -1 | cut -d: -f2) ||
    { echo "bulkhead_bench: serve did not start: $(cat "$work/serve.out")" >&2; exit 1; }
}
# measure NAME BINARY LOAD: one row's run; LOAD is alone, hang or spin.
declare -A results=()
measure() {
  local name=$1 binary=$2 load=$3 bad_pid=""
  runs=$((runs + 1))
  serve "$binary"
  if [ "$load" != alone ]; then
    wrk -t2 -c100 -d"$((secs + 4))s" --timeout 60s -s "$work/$load.lua" \
      "http://127.0.0.1:$port/api/v1/template.execute" -- "bad$runs" > "$work/bad.out" 2>&1 &
    bad_pid=$!
    pids+=("$bad_pid")
    sleep 2
  fi
  wrk -t2 -c"$hello_connections" -d"${secs}s" --timeout 10s --latency -s "$work/hello.lua" \
    "http://127.0.0.1:$port/api/v1/template.execute" -- "r$runs" > "$work/wrk.out" ||
    { echo "bulkhead_bench: wrk failed: $(cat "$work/wrk.out")" >&2; exit 1; }
  [ -z "$bad_pid" ] || kill "$bad_pid" 2>/dev/null || true
  kill -9 "$serve_pid" 2>/dev/null || true
  wait "$serve_pid" 2>/dev/null || true
  [ -z "$bad_pid" ] || wait "$bad_pid" 2>/dev/null || true
  local rps p50 p99 answered bad
  rps=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.out")
  p50=$(awk '$1=="50%" {print $2}' "$work/wrk.out")
  p99=$(awk '$1=="99%" {print $2}' "$work/wrk.out")
  [ -n "$p50" ] || { p50=-; p99=-; }  # nothing answered
  answered=$(awk '/requests in/ {print $1}' "$work/wrk.out")
  # Answered other than 2xx (503, 500 ...): wrk's non-2xx count.
  bad=$(awk '/Non-2xx/ {n += $NF} END {print n + 0}' "$work/wrk.out")
  results["$name|$load"]+="$rps $p50 $p99 $answered $bad;"
}

# A latency as wrk prints it (12.5us, 3.1ms, 2.0s) in milliseconds.
to_ms() { [ "$1" != - ] || { echo -n -; return; }; awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0; else if (v ~ /s$/) n *= 1000; else if (v ~ /m$/) n *= 60000; printf "%.3f", n }'; }
median() { sort -g | awk '{a[NR] = $1} END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

binaries=("plugboard serve|$build/plugboard")
[ -z "${BASELINE:-}" ] || binaries+=("plugboard serve (baseline)|$BASELINE")
for _ in $(seq "$rounds"); do
  for b in "${binaries[@]}"; do
    for load in alone hang spin; do measure "${b%%|*}" "${b#*|}" "$load"; done
  done
done

echo "| server | hello beside | hello requests/s | / alone | p50 | p99 | hello answered (all rounds) | of them not 2xx |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for b in "${binaries[@]}"; do
  name=${b%%|*}
  alone=""
  for load in alone hang spin; do
    IFS=';' read -r -a rows <<<"${results[$name|$load]}"
    rps=$(for r in "${rows[@]}"; do echo "${r%% *}"; done | median)
    p50=$(for r in "${rows[@]}"; do set -- $r; to_ms "$2"; echo; done | median)
    p99=$(for r in "${rows[@]}"; do set -- $r; to_ms "$3"; echo; done | median)
    answered=$(for r in "${rows[@]}"; do set -- $r; echo "$4"; done | awk '{n += $1} END {print n + 0}')
    bad=$(for r in "${rows[@]}"; do set -- $r; echo "$5"; done | awk '{n += $1} END {print n + 0}')
    [ "$load" != alone ] || alone=$rps
    ratio=$(awk -v a="$rps" -v b="$alone" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
    case $load in
      alone) what="nothing (alone)" ;;
      hang) what="100 connections on a hanging plugin" ;;
      spin) what="100 connections on a spinning plugin" ;;
    esac
    [ "$p50" = - ] || p50="$p50 ms"
    [ "$p99" = - ] || p99="$p99 ms"
    echo "| $name | $what | $rps | $ratio | $p50 | $p99 | $answered | $bad |"
  done
done

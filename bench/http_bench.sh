#!/usr/bin/env bash
# HTTP throughput and latency of POST /api/v1/template.execute on the hello plugin, with
# wrk at 1, 16, 64 and 256 connections, side by side in one run:
#   plugboard serve, the Argo-style Python http.server sidecar (bench/sidecar.py) doing the
#   same work, and nginx answering the same reply bytes from a `return 200` location (the
#   ceiling for any HTTP server on this machine).
#   ./bench/http_bench.sh [seconds per run, default 5]
# Every request carries a different workflow uid, so each is a new call, as Argo's traffic
# is. serve is also measured with one body sent again and again, which it answers from its
# table of outcomes after the first call (docs/serve.md): that is its own row, "same body".
# nginx is measured both ways too. Installs wrk and nginx (Debian packages) when missing.
# Prints a markdown table; "/ nginx" is a row's requests/s over nginx's sent the same kind
# of bodies, at the same connections in the same round.
# Environment:
#   DISTINCT=0      every server gets the one body (the outcome-table path only; the
#                   measurement before distinct calls became the default)
#   SERVE_ONLY=1    only plugboard serve; CONNECTIONS="16" the connection counts
#   BUILD_DIR=DIR   the build to run (default build); SKIP_SETUP=1 does not build first
#   BASELINE=FILE   another plugboard binary (an older build, say) served beside it on the
#                   same plugins, measured in turn with the others; it finds its deployers
#                   in a `deployers` directory beside it, so copy it next to a link to
#                   $BUILD_DIR/deployers
#   ROUNDS=N        measure every row N times, in turn (default 1)
#   NO_SIDECAR=1    leave the Python sidecar out of the measurements
#   SERVE_ARGS="--workers 2"  further arguments for serve (both builds)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
build=${BUILD_DIR:-build}
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
[ -n "${SKIP_SETUP:-}" ] || ./tools/setup.sh >/dev/null

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

body='{"workflow":{"metadata":{"name":"wf","namespace":"argo","uid":"1"}},"template":{"name":"t","plugin":{"hello":{"name":"bench"}}}}'
reply='{"node":{"message":"Hello, bench!","outputs":{"parameters":[{"name":"greeting","value":"Hello, bench!"}]},"phase":"Succeeded"}}'
# same.lua sends one body; distinct.lua gives each request a workflow uid of its own,
# unique across runs too (wrk passes the run's number after `--` to init), so no run is
# answered from the outcomes another one left in serve's table.
cat > "$work/same.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
LUA
cp "$work/same.lua" "$work/distinct.lua"
cat bench/distinct_calls.lua >> "$work/distinct.lua"
calls=distinct
[ "${DISTINCT:-1}" != 0 ] || calls=same

# shellcheck disable=SC2086  # SERVE_ARGS is meant to split
"$build/plugboard" serve --plugins "$build/plugins" --listen 127.0.0.1:0 --no-watch --log-level off ${SERVE_ARGS:-} > "$work/serve.out" &
pids+=($!)
serve_pid=$!
baseline_pid=""
if [ -n "${BASELINE:-}" ]; then
  # shellcheck disable=SC2086
  "$BASELINE" serve --plugins "$build/plugins" --listen 127.0.0.1:0 --no-watch --log-level off ${SERVE_ARGS:-} > "$work/baseline.out" &
  pids+=($!)
  baseline_pid=$!
fi
/usr/bin/python3 bench/sidecar.py 0 > "$work/sidecar.out" 2> "$work/sidecar.err" &
pids+=($!)
sidecar_pid=$!
nginx_port=$((20000 + RANDOM % 20000))
mkdir -p "$work/nginx"
cat > "$work/nginx/nginx.conf" <<NGINX
worker_processes auto;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/nginx;
  server {
    listen 127.0.0.1:$nginx_port;
    location = /api/v1/template.execute { default_type application/json; return 200 '$reply'; }
  }
}
NGINX
/usr/sbin/nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -g 'daemon off;' &
pids+=($!)
nginx_pid=$!
for _ in $(seq 50); do
  grep -q "http://" "$work/serve.out" 2>/dev/null && grep -q ready "$work/sidecar.out" 2>/dev/null &&
    { [ -z "${BASELINE:-}" ] || grep -q "http://" "$work/baseline.out" 2>/dev/null; } && break
  sleep 0.1
done
serve_port=$(grep -o '127.0.0.1:[0-9]*' "$work/serve.out" | head -1 | cut -d: -f2)
baseline_port=""
[ -z "${BASELINE:-}" ] || baseline_port=$(grep -o '127.0.0.1:[0-9]*' "$work/baseline.out" | head -1 | cut -d: -f2)
sidecar_port=$(awk '/ready/ {print $2}' "$work/sidecar.out")
sleep 0.3
# The three must give the same answer.
for port in "$serve_port" $baseline_port "$sidecar_port" "$nginx_port"; do
  got=$(curl -s -X POST -H 'Content-Type: application/json' -d "$body" "http://127.0.0.1:$port/api/v1/template.execute" 2>/dev/null || true)
  [ -z "$got" ] || /usr/bin/python3 -c "import json,sys; a=json.loads(sys.argv[1]); b=json.loads(sys.argv[2]); sys.exit(0 if a==b else 1)" "$got" "$reply" \
    || { echo "http_bench: port $port answered $got" >&2; exit 1; }
done

# CPU time (user + system, clock ticks) of a process and its child processes (nginx's
# workers): on a machine shared with other work, CPU per request compares servers
# better than requests/s, which depends on the CPU each one got.
cpu_ticks() {
  local total=0 p f
  for p in "$1" $(pgrep -P "$1"); do
    read -r -a f < <(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null) || continue
    total=$((total + f[11] + f[12]))
  done
  echo "$total"
}
hz=$(getconf CLK_TCK)

runs=0
rows=()
declare -A nginx_rps=()
run() {  # name port pid connections lua
  local threads=$(( $4 < 2 ? $4 : 2 ))
  local before after
  runs=$((runs + 1))
  before=$(cpu_ticks "$3")
  wrk -t"$threads" -c"$4" -d"${secs}s" --latency -s "$work/$5.lua" "http://127.0.0.1:$2/api/v1/template.execute" -- "r$runs" > "$work/wrk.out"
  after=$(cpu_ticks "$3")
  local rps p50 p99 n cpu
  rps=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.out")
  p50=$(awk '$1=="50%" {print $2}' "$work/wrk.out")
  p99=$(awk '$1=="99%" {print $2}' "$work/wrk.out")
  n=$(awk '/requests in/ {print $1}' "$work/wrk.out")
  cpu=$(awk -v a="$after" -v b="$before" -v n="$n" -v hz="$hz" 'BEGIN { if (n > 0) printf "%.1fus", (a - b) / hz * 1e6 / n; else print "-" }')
  [ "$3" != "$nginx_pid" ] || nginx_rps[$5]=$rps
  rows+=("$4|$1|$rps|$p50|$p99|$cpu|$5")
}
# Prints the rows of one connection count, each with its ratio to the requests/s of nginx
# sent the same kind of bodies (writing a distinct body costs wrk time of its own).
flush() {
  local row c name rps p50 p99 cpu lua ratio
  for row in "${rows[@]}"; do
    IFS='|' read -r c name rps p50 p99 cpu lua <<<"$row"
    ratio=$(awk -v a="$rps" -v b="${nginx_rps[$lua]:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
    echo "| $c | $name | $rps | $ratio | $p50 | $p99 | $cpu |"
  done
  rows=()
  nginx_rps=()
}
if [ "$calls" = same ]; then
  serve_name="plugboard serve"; nginx_name="nginx return 200"
else
  serve_name="plugboard serve, new calls"; nginx_name="nginx return 200, new bodies"
fi
echo "| connections | server | requests/s | / nginx | p50 | p99 | server CPU per request |"
echo "|---:|---|---:|---:|---:|---:|---:|"
for _ in $(seq "${ROUNDS:-1}"); do
  for c in ${CONNECTIONS:-1 16 64 256}; do
    run "$serve_name" "$serve_port" "$serve_pid" "$c" "$calls"
    [ "$calls" = same ] || run "plugboard serve, same body (outcome table)" "$serve_port" "$serve_pid" "$c" same
    if [ -n "$baseline_port" ]; then
      run "${serve_name/plugboard serve/plugboard serve (baseline)}" "$baseline_port" "$baseline_pid" "$c" "$calls"
      [ "$calls" = same ] || run "plugboard serve (baseline), same body" "$baseline_port" "$baseline_pid" "$c" same
    fi
    if [ -z "${SERVE_ONLY:-}" ]; then
      [ -n "${NO_SIDECAR:-}" ] || run "Python http.server sidecar" "$sidecar_port" "$sidecar_pid" "$c" "$calls"
      run "$nginx_name" "$nginx_port" "$nginx_pid" "$c" "$calls"
      [ "$calls" = same ] || run "nginx return 200, same body" "$nginx_port" "$nginx_pid" "$c" same
    fi
    flush
  done
done

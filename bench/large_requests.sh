#!/usr/bin/env bash
# Large template.execute requests against plugboard serve, each written at once as a
# client's sendall() writes it, and distinct (every one a new call): per-request latency
# (median, p99, max), the requests slower than 1 s, and serve's resident memory after
# them; then `plugboard call echo` with 10,000 and 100,000 output parameters (CPU time).
#   ./bench/large_requests.sh [requests, default 200]
# Environment: BUILD_DIR=DIR (default build); BASELINE=DIR another build tree measured
# beside it, in turn; SIZE_MIN/SIZE_MAX the body sizes (default 600000/1000000).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
builds=("${BUILD_DIR:-build}")
[ -n "${BASELINE:-}" ] && builds+=("$BASELINE")
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cat >"$work/client.py" <<'PY'
import json, random, socket, sys, time
port, n, lo, hi, seed = (int(a) for a in sys.argv[1:6])
random.seed(seed)
lat = []
s = None
for i in range(n):
    if i % 2 == 0:
        if s: s.close()
        s = socket.create_connection(("127.0.0.1", port))
    v = "%d-%d-" % (seed, i) + "v" * random.randint(lo, hi)
    body = json.dumps({"workflow": {"metadata": {"name": "wf", "namespace": "argo", "uid": "1"}},
                       "template": {"name": "t", "plugin": {"echo": {"v": v}}}}).encode()
    req = b"POST /api/v1/template.execute HTTP/1.1\r\nHost: b\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    t = time.monotonic(); s.sendall(req); data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(1 << 20)
    head, rest = data.split(b"\r\n\r\n", 1)
    cl = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0])
    while len(rest) < cl:
        rest += s.recv(1 << 20)
    lat.append(time.monotonic() - t)
lat.sort()
print("%.0f %.0f %.0f %d" % (lat[len(lat)//2]*1000, lat[int(len(lat)*0.99)-1]*1000, lat[-1]*1000, sum(1 for x in lat if x > 1)))
PY
python3 - "$work" <<'PY'
import json, sys
for k in (10000, 100000):
    json.dump({"k%d" % i: "v" for i in range(k)}, open("%s/args%d.json" % (sys.argv[1], k), "w"))
PY
echo "| build | requests | median ms | p99 ms | max ms | slower than 1 s | serve RSS after, MiB | call echo 10k params, CPU s | 100k params, CPU s | ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for b in "${builds[@]}"; do
  "$b/plugboard" serve --plugins "$b/plugins" --listen 127.0.0.1:0 --idle-timeout 7s >"$work/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do grep -q "serving" "$work/serve.log" && break; sleep 0.05; done
  port=$(grep -o '127.0.0.1:[0-9]*' "$work/serve.log" | head -1 | cut -d: -f2)
  read -r med p99 max slow < <(python3 "$work/client.py" "$port" "$n" "${SIZE_MIN:-600000}" "${SIZE_MAX:-1000000}" 7)
  rss=$(awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  cpu() { /usr/bin/time -f "%U %S" "$b/plugboard" call echo --plugins "$b/plugins" --args-file "$1" --json 2>&1 >/dev/null | tail -1 | awk '{printf "%.2f", $1+$2}'; }
  c10=$(cpu "$work/args10000.json"); c100=$(cpu "$work/args100000.json")
  ratio=$(awk -v a="$c10" -v b="$c100" 'BEGIN { printf "%.1f", (a > 0 ? b / a : 0) }')
  echo "| $b | $n | $med | $p99 | $max | $slow | $rss | $c10 | $c100 | ${ratio}x |"
done

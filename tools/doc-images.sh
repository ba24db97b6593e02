#!/usr/bin/env bash
# Makes the pictures in the docs from this build:
#   docs/images/hello-pipeline.svg  examples/hello.toml run once, its step graph coloured by
#                                   that run's phases, drawn by Graphviz (docs/graph.md);
#   docs/images/status-page.png     serve's status page at phone width, with the hello and
#                                   multi plugins, one call made, one refused file and one
#                                   reload, as headless Chromium renders it (docs/serve.md).
# Usage: tools/doc-images.sh [build dir, default build]. Needs Debian's graphviz and
# chromium (tools/setup.sh installs both).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
for tool in dot chromium; do
  command -v "$tool" >/dev/null || { echo "doc-images: $tool is missing (tools/setup.sh installs it)" >&2; exit 2; }
done
work=$(mktemp -d)
serve_pid=
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

"$build_dir/plugboard" run examples/hello.toml --plugins "$build_dir/plugins" --output json >"$work/run.json"
"$build_dir/plugboard" graph examples/hello.toml --plugins "$build_dir/plugins" --run-output "$work/run.json" |
  dot -Tsvg >docs/images/hello-pipeline.svg
echo "wrote docs/images/hello-pipeline.svg"

mkdir -m 0755 "$work/plugins"
cp "$build_dir/plugins/hello.so" "$build_dir/plugins/multi.so" "$work/plugins/"
echo "not a plugin" >"$work/plugins/broken.so"
"$build_dir/plugboard" serve --plugins "$work/plugins" --listen 127.0.0.1:0 >"$work/serve.out" 2>&1 &
serve_pid=$!
for _ in $(seq 100); do
  grep -q "http://" "$work/serve.out" && break
  sleep 0.1
done
url=$(grep -o 'http://[0-9.:]*' "$work/serve.out" | head -1)
[ -n "$url" ] || { echo "doc-images: serve did not start:" >&2; cat "$work/serve.out" >&2; exit 1; }
curl -fsS -X POST "$url/api/v1/plugins/multi/text.count" -d '{"text":"a b c"}' >/dev/null
# One reload: echo installed the way the docs advise, written beside and moved in.
cp "$build_dir/plugins/echo.so" "$work/echo.so" && mv "$work/echo.so" "$work/plugins/echo.so"
for _ in $(seq 100); do
  curl -fsS "$url/api/v1/plugins" | grep -q '"total":1' && break
  sleep 0.1
done
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/chromium" \
  --window-size=390,1150 --virtual-time-budget=5000 --screenshot="$PWD/docs/images/status-page.png" \
  "$url/" 2>/dev/null
echo "wrote docs/images/status-page.png"

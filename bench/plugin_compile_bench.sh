#!/usr/bin/env bash
# Compile time of the translation unit `plugboard new plugin` writes, next to a file that
# includes only nlohmann/json.hpp: g++ -O2 -c each, in turn, ROUNDS times (default 5).
# Prints the commands, every round, and the medians of wall-clock and CPU (user + system)
# seconds with their ratios; on a loaded machine the CPU seconds are the steadier measure.
#   ./bench/plugin_compile_bench.sh [BUILD_DIR, default build]
# Compiles against the SDK headers of this source tree, with the flags
# plugboard_add_plugin() gives a plugin (C++20, -fPIC, hidden visibility, -fno-gnu-unique).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/plugboard" new plugin demo --dir "$tmp/demo" >/dev/null
echo '#include <nlohmann/json.hpp>' >"$tmp/json_only.cc"
flags=(-std=c++20 -O2 -fPIC -fvisibility=hidden -fvisibility-inlines-hidden -fno-gnu-unique
       -DBOOST_DLL_USE_STD_FS -I"$PWD/sdk/include")
plugin_cmd=(g++ "${flags[@]}" -c "$tmp/demo/demo.cc" -o "$tmp/demo.o")
json_cmd=(g++ "${flags[@]}" -c "$tmp/json_only.cc" -o "$tmp/json_only.o")
echo "plugin: ${plugin_cmd[*]}"
echo "json:   ${json_cmd[*]}"
# "<wall> <cpu>" seconds of `$@`.
timed() {
  local TIMEFORMAT='%R %U %S' t
  t=$({ time "$@" >&2; } 2>&1 | tail -1)
  awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' <<<"$t"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: >"$tmp/plugin.times"
: >"$tmp/json.times"
for ((i = 1; i <= rounds; i++)); do
  timed "${plugin_cmd[@]}" >>"$tmp/plugin.times"
  timed "${json_cmd[@]}" >>"$tmp/json.times"
  echo "round $i: plugin $(tail -1 "$tmp/plugin.times") s, json $(tail -1 "$tmp/json.times") s (wall cpu)"
done
[ -s "$tmp/demo.o" ] && [ -s "$tmp/json_only.o" ] || { echo "a compile failed" >&2; exit 1; }
pw=$(cut -d' ' -f1 "$tmp/plugin.times" | median) pc=$(cut -d' ' -f2 "$tmp/plugin.times" | median)
jw=$(cut -d' ' -f1 "$tmp/json.times" | median) jc=$(cut -d' ' -f2 "$tmp/json.times" | median)
awk -v n="$rounds" -v pw="$pw" -v pc="$pc" -v jw="$jw" -v jc="$jc" 'BEGIN {
  printf "median of %d, wall: plugin %.2f s, json.hpp only %.2f s, ratio %.2f\n", n, pw, jw, pw / jw
  printf "median of %d, cpu:  plugin %.2f s, json.hpp only %.2f s, ratio %.2f\n", n, pc, jc, pc / jc }'

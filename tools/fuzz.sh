#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang (ASan + UBSan) into ./build-fuzz
# (FUZZ_BUILD_DIR=... to change it) and runs each for SECONDS (default 60), at most
# FUZZ_PARALLEL (default 2) at a time under nice, each on a working copy of its seed
# corpus (fuzz/corpus/<target>) kept in the build directory, so later runs go on from
# where earlier ones stopped.
#
#   tools/fuzz.sh [SECONDS] [TARGET...]        e.g. tools/fuzz.sh 600 http protocol
#
# Prints one line per target: executions, executions per second, coverage (libFuzzer's cov
# and ft) and what it found. A finding (crash-*, leak-*, timeout-*, oom-* in
# <build>/fuzz-runs/<target>/) makes the exit status 1: reproduce it with
# <build>/fuzz/fuzz_<target> FILE, fix it, and add FILE to fuzz/corpus/<target>/ so that
# the normal test suite replays it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
build_dir=${FUZZ_BUILD_DIR:-build-fuzz}
parallel=${FUZZ_PARALLEL:-2}
all_targets=(elf_manifest protocol workflow config registry argo_args schema substitution arcaflow_expression http http_pieces atp)
targets=("$@")
((${#targets[@]})) || targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $target "* ]] || { echo "fuzz: no target '$target' (${all_targets[*]})" >&2; exit 2; }
done

missing=()
for p in clang libclang-rt-dev cmake ninja-build; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "fuzz: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

umask 022  # plugin files must not be group- or world-writable (the runtime refuses them)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DPLUGBOARD_FUZZ=ON -DBUILD_TESTING=OFF \
  "${launcher[@]}" >/dev/null
# Only the targets asked for: each links a fully instrumented build of what it reads.
nice -n 10 cmake --build "$build_dir" -j "${FUZZ_JOBS:-2}" --target "${targets[@]/#/fuzz_}"

# The dictionaries (fuzz/dict/) of each target's tokens, joined into one.
declare -A dicts=(
  [elf_manifest]="json manifest" [protocol]="json protocol" [workflow]="toml workflow"
  [config]="toml config" [registry]="toml registry" [argo_args]="json argo"
  [schema]="json schema" [substitution]="json substitution" [arcaflow_expression]="arcaflow" [http]="http argo json" [http_pieces]="http argo json"
)
runs=$build_dir/fuzz-runs
run_one() {
  local target=$1 dir=$runs/$1 d
  mkdir -p "$dir/corpus"
  : >"$dir/dict"
  for d in ${dicts[$target]:-}; do cat "fuzz/dict/$d.dict" >>"$dir/dict"; done
  local options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
                 -artifact_prefix="$dir/")
  [ -s "$dir/dict" ] && options+=(-dict="$dir/dict")  # atp's input is binary: no dictionary
  nice -n 10 "$build_dir/fuzz/fuzz_$target" "${options[@]}" "$dir/corpus" "fuzz/corpus/$target" \
    >"$dir/log" 2>&1 || true
}

running=0
for target in "${targets[@]}"; do
  [ -x "$build_dir/fuzz/fuzz_$target" ] || { echo "fuzz: no target '$target'" >&2; exit 2; }
  rm -f "$runs/$target"/{crash,leak,timeout,oom,slow-unit}-*
  run_one "$target" &
  if ((++running >= parallel)); then
    wait -n
    ((running--))
  fi
done
wait

status=0
printf '%-14s %12s %10s %7s %7s  %s\n' target executions "execs/s" cov ft findings
for target in "${targets[@]}"; do
  log=$runs/$target/log
  stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$last")
  findings=$(cd "$runs/$target" && ls -1 crash-* leak-* timeout-* oom-* 2>/dev/null | tr '\n' ' ' || true)
  [ -n "$findings" ] && status=1
  printf '%-14s %12s %10s %7s %7s  %s\n' "$target" "$(stat number_of_executed_units)" \
    "$(stat average_exec_per_sec)" "${cov:-?}" "${ft:-?}" "${findings:-none}"
done
exit $status

#!/usr/bin/env bash
# Argo's own executor-plugin e2e workflows run locally by `plugboard run`, end to end, with
# the ConfigMaps Argo's e2e suite installs, against the 10-15 s an agent pod takes to start
# on a cluster (argo-workflows issue #7891):
#   ./bench/argo_workflow_bench.sh ARGO_CHECKOUT [--runs 5] [--plugboard build/plugboard]
#
# ARGO_CHECKOUT is a checkout of argo-workflows: its test/e2e/testdata/plugins/executor/
# massive-executor-workflow.yaml (15 calls of the `massive` plugin from a withSequence,
# parallelism 6; each answer is a 100,000-character output parameter) and
# template-executor-workflow.yaml (one call of `hello`) run with
# `--executor-plugins DIR`, DIR holding copies of its test/e2e/manifests/plugins/
# {hello,massive}-executor-plugin-configmap.yaml. Their image, python:alpine3.23, is the
# local stand-in tests/support/make_argo_example_images.sh makes (no registry needed).
# Each run is timed from the start of `plugboard run` to each line it prints (the line of
# a node that ends is written when it ends): the first plugin node that succeeds is the
# start-to-first-plugin-call time (reading the files, starting the sidecar container,
# waiting for its port, the call), the exit is the whole run (the sidecars removed). Side
# by side, interleaved: `podman run --rm` of the same image running `python -c pass` (a
# container that starts and ends, the floor of any sidecar). Prints medians (and the
# range) as a markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '4,5p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
(($#)) || usage
argo=$1
shift
runs=5
plugboard=build/plugboard
while (($#)); do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --plugboard) plugboard=$2; shift 2 ;;
    *) usage ;;
  esac
done
workflows=$argo/test/e2e/testdata/plugins/executor
manifests=$argo/test/e2e/manifests/plugins
for f in "$workflows/massive-executor-workflow.yaml" "$workflows/template-executor-workflow.yaml" \
  "$manifests/hello-executor-plugin-configmap.yaml" "$manifests/massive-executor-plugin-configmap.yaml"; do
  [ -f "$f" ] || { echo "argo_workflow_bench: no $f (is $argo an argo-workflows checkout?)" >&2; exit 2; }
done
[ -x "$plugboard" ] || { echo "argo_workflow_bench: no $plugboard (run ./tools/setup.sh)" >&2; exit 2; }

./tests/support/make_argo_example_images.sh >/dev/null
plugins=$(mktemp -d)
trap 'rm -rf "$plugins"' EXIT
cp "$manifests/hello-executor-plugin-configmap.yaml" "$manifests/massive-executor-plugin-configmap.yaml" "$plugins/"
podman=(podman --runtime runc --cgroup-manager cgroupfs)

# timed WORKFLOW: prints "FIRST TOTAL", seconds from the start to the first plugin node
# that succeeded and to the exit. Fails if the run does not succeed.
timed() {
  local start first="" line last=""
  start=$EPOCHREALTIME
  while IFS= read -r line; do
    last=$line
    if [ -z "$first" ] && [[ $line == *"-plugin): Succeeded"* || $line == *" (main): Succeeded"* ]]; then
      first=$EPOCHREALTIME
    fi
  done < <("$plugboard" run --executor-plugins "$plugins" "$1" 2>&1; echo "exit $?")
  [[ $last == "exit 0" ]] || { echo "argo_workflow_bench: $1 did not succeed ($last)" >&2; exit 1; }
  [ -n "$first" ] || { echo "argo_workflow_bench: no plugin node succeeded in $1" >&2; exit 1; }
  echo "$(bc <<<"$first - $start") $(bc <<<"$EPOCHREALTIME - $start")"
}

floor() {
  local start=$EPOCHREALTIME
  "${podman[@]}" run --rm --network=none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 \
    docker.io/library/python:alpine3.23 python -c pass
  bc <<<"$EPOCHREALTIME - $start"
}

declare -a massive_first massive_total hello_first hello_total bare
for ((i = 0; i < runs; i++)); do
  r=$(timed "$workflows/massive-executor-workflow.yaml")
  massive_first+=("${r% *}") massive_total+=("${r#* }")
  r=$(timed "$workflows/template-executor-workflow.yaml")
  hello_first+=("${r% *}") hello_total+=("${r#* }")
  r=$(floor)
  bare+=("$r")
done

# stats VALUES...: "median (min-max)", seconds to two decimals.
stats() {
  printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1}
    END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
         printf "%.2f (%.2f-%.2f)", m, v[1], v[NR]}'
}

echo "| run ($runs times, interleaved) | start to first plugin result, s | start to exit, s |"
echo "|---|---:|---:|"
echo "| massive-executor-workflow (15 calls, parallelism 6) | $(stats "${massive_first[@]}") | $(stats "${massive_total[@]}") |"
echo "| template-executor-workflow (1 call) | $(stats "${hello_first[@]}") | $(stats "${hello_total[@]}") |"
echo "| \`podman run --rm\` of the sidecars' image, \`python -c pass\` | - | $(stats "${bare[@]}") |"
echo "| an agent pod on a cluster (argo-workflows #7891) | 10-15 | - |"

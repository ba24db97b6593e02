#!/usr/bin/env bash
# End-to-end cost of `plugboard run` on workflows with many steps, for one or more
# plugboard binaries side by side:
#   ./bench/runner_bench.sh [--counts 1000,10000,100000] [--shapes independent,chained,fan,half]
#                           [--runs 3] [--parallel 2] [--max-steps NAME=N]... [--argo] NAME=BINARY...
# e.g. ./bench/runner_bench.sh old=/path/to/old/plugboard new=build/plugboard --max-steps old=10000
#
# Every step calls the `echo` plugin in-process (the plugins and deployers next to each
# binary: BINARY's directory /plugins and /deployers). Shapes, for N steps:
#   independent  N steps, no dependencies
#   chained      a line: step i depends on step i-1 and passes its output along
#   fan          one root, N-2 steps depending on it (using its output), one join on all of them
#   half         N/2 independent steps, then a chain of N/2
# Each measurement is `plugboard run WF --parallel P --output json >/dev/null`: its wall
# time (date), its CPU time (user + system) and max RSS (/usr/bin/time -f "%U %S %M").
# Binaries run interleaved, RUNS times each; medians are printed. The per-step columns are
# (value - the same binary's 1-step value) / steps, so process start-up and the loaded
# plugin do not count; CPU time is what a busy shared machine disturbs least. --max-steps skips a
# binary above N steps (a slow one). With --argo, each binary also runs the same workflow
# written as an Argo Workflow (a dag of plugin templates, outputs passed with
# {{tasks.X.outputs.parameters.text}}), as the row NAME+argo, interleaved with the TOML
# runs. Prints a markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."

counts=1000,10000,100000
shapes=independent,chained,fan,half
runs=3
parallel=2
declare -A max_steps=()
argo=0
names=()
declare -A binaries=()
while (($#)); do
  case "$1" in
    --counts) counts=$2; shift 2 ;;
    --shapes) shapes=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --parallel) parallel=$2; shift 2 ;;
    --max-steps) max_steps[${2%%=*}]=${2#*=}; shift 2 ;;
    --argo) argo=1; shift ;;
    *=*) names+=("${1%%=*}"); binaries[${1%%=*}]=$(realpath "${1#*=}"); shift ;;
    *) echo "usage: $0 [--counts N,...] [--shapes S,...] [--runs R] [--parallel P] [--max-steps NAME=N]... NAME=BINARY..." >&2; exit 2 ;;
  esac
done
((${#names[@]})) || names=(new) binaries[new]=$(realpath build/plugboard)
if ((argo)); then
  for name in "${names[@]}"; do names+=("$name+argo"); binaries[$name+argo]=${binaries[$name]}; done
fi
if [ ! -x /usr/bin/time ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq time >/dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# workflow SHAPE N [toml|argo] > file
workflow() {
  python3 - "$1" "$2" "${3:-toml}" <<'PY'
import sys
shape, n, fmt = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if fmt == "argo":
    out = ['apiVersion: argoproj.io/v1alpha1', 'kind: Workflow',
           'metadata:', '  name: bench-%s-%d' % (shape, n), 'spec:', '  entrypoint: main',
           '  templates:',
           '    - name: echo', '      inputs:', '        parameters:', '          - name: text',
           '      outputs:', '        parameters:', '          - name: text',
           '            valueFrom:', '              supplied: {}',
           '      plugin:', '        echo:', '          text: "{{inputs.parameters.text}}"',
           '    - name: main', '      dag:', '        tasks:']
else:
    out = ['name = "bench-%s-%d"' % (shape, n)]
def step(i, deps=(), ref=None):
    if fmt == "argo":
        text = '"{{tasks.s%d.outputs.parameters.text}}"' % ref if ref is not None else 'hello'
        out.append('          - name: s%d\n            template: echo\n'
                   '            arguments:\n              parameters:\n'
                   '                - name: text\n                  value: %s' % (i, text))
        if deps:
            out.append('            depends: "%s"' % ' && '.join('s%d' % d for d in deps))
        return
    text = '"${steps.s%d.outputs.parameters.text}"' % ref if ref is not None else '"hello"'
    out.append('[[steps]]\nid = "s%d"\nplugin = "echo"\nargs = { text = %s }' % (i, text))
    if deps:
        out.append('depends = [%s]' % ', '.join('"s%d"' % d for d in deps))
for i in range(n):
    if shape == "independent" or n == 1:
        step(i)
    elif shape == "chained":
        step(i, [i - 1], i - 1) if i else step(i)
    elif shape == "fan":
        if i == 0: step(0)
        elif i < n - 1: step(i, [0], 0)
        else: step(i, range(1, n - 1))
    elif shape == "half":
        half = n // 2
        step(i, [i - 1], i - 1) if i > half else step(i)
    else:
        sys.exit("unknown shape " + shape)
print("\n".join(out))
PY
}

# measure NAME FILE -> "wall_us rss_kb cpu_us"; NAME+argo runs FILE's .yaml twin.
measure() {
  local bin=${binaries[$1]} start end file=$2
  [[ $1 == *+argo ]] && file=${file%.toml}.yaml
  local dir
  dir=$(dirname "$bin")
  start=$(date +%s%N)
  if ! /usr/bin/time -f "%U %S %M" -o "$work/rss" "$bin" run "$file" --plugins "$dir/plugins" --deployers "$dir/deployers" \
      --parallel "$parallel" --output json --log-level off > "$work/out" 2> "$work/err"; then
    echo "$1 failed on $file:" >&2; tail -5 "$work/err" >&2; exit 1
  fi
  end=$(date +%s%N)
  # A TOML run says so in its report; an Argo one exits 0 only when it Succeeded.
  [[ $1 == *+argo ]] || grep -q '"succeeded": true' "$work/out" || { echo "$1: $file did not succeed" >&2; exit 1; }
  tail -1 "$work/rss" | awk -v us=$(( (end - start) / 1000 )) '{printf "%d %d %d\n", us, $3, ($1 + $2) * 1e6}'
}

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

# run_set N SHAPE FILE -> sets us[name], kb[name] and cpu[name] (medians)
declare -A us=() kb=() cpu=()
run_set() {
  local n=$1 file=$3 name r
  declare -A ts=() rs=() cs=()
  for ((r = 0; r < runs; r++)); do
    for name in "${names[@]}"; do
      if [ -n "${max_steps[$name]:-}" ] && ((n > ${max_steps[$name]})); then continue; fi
      read -r t m c < <(measure "$name" "$file")
      ts[$name]+="$t "; rs[$name]+="$m "; cs[$name]+="$c "
    done
  done
  for name in "${names[@]}"; do
    if [ -z "${ts[$name]:-}" ]; then us[$name]=""; kb[$name]=""; cpu[$name]=""; continue; fi
    us[$name]=$(tr ' ' '\n' <<<"${ts[$name]}" | grep . | median)
    kb[$name]=$(tr ' ' '\n' <<<"${rs[$name]}" | grep . | median)
    cpu[$name]=$(tr ' ' '\n' <<<"${cs[$name]}" | grep . | median)
  done
}

workflow independent 1 > "$work/one.toml"
workflow independent 1 argo > "$work/one.yaml"
run_set 1 independent "$work/one.toml"
declare -A base_us=() base_kb=() base_cpu=()
for name in "${names[@]}"; do base_us[$name]=${us[$name]}; base_kb[$name]=${kb[$name]}; base_cpu[$name]=${cpu[$name]}; done

echo "parallel $parallel, median of $runs runs; 1-step run: $(for name in "${names[@]}"; do
  awk -v n="$name" -v t="${base_us[$name]}" -v m="${base_kb[$name]}" 'BEGIN {printf "%s %.1f ms %.1f MB; ", n, t / 1000, m / 1024}'; done)"
echo
echo "| steps | shape | binary | wall s | wall µs/step | CPU µs/step | max RSS MB | KB/step |"
echo "|---:|---|---|---:|---:|---:|---:|---:|"
IFS=, read -ra count_list <<<"$counts"
IFS=, read -ra shape_list <<<"$shapes"
for n in "${count_list[@]}"; do
  for shape in "${shape_list[@]}"; do
    workflow "$shape" "$n" > "$work/wf.toml"
    ((argo)) && workflow "$shape" "$n" argo > "$work/wf.yaml"
    run_set "$n" "$shape" "$work/wf.toml"
    for name in "${names[@]}"; do
      if [ -z "${us[$name]}" ]; then
        echo "| $n | $shape | $name | skipped | | | | |"
        continue
      fi
      awk -v n="$n" -v shape="$shape" -v name="$name" -v t="${us[$name]}" -v t1="${base_us[$name]}" \
        -v m="${kb[$name]}" -v m1="${base_kb[$name]}" -v c="${cpu[$name]}" -v c1="${base_cpu[$name]}" \
        'BEGIN {printf "| %d | %s | %s | %.2f | %.1f | %.1f | %.1f | %.2f |\n", n, shape, name, t / 1e6, (t - t1) / n, (c - c1) / n, m / 1024, (m - m1) / n}'
    done
  done
done

#!/usr/bin/env bash
# Argo's examples as a suite: every Workflow under <argo-checkout>/examples/ is either
# refused by `plugboard validate` naming the feature it needs, or run by `plugboard run`
# and expected to reach Succeeded (what Argo's test/e2e/examples_test.go asks of every
# example without the `workflows.argoproj.io/no-test` label). Argo's files stay in the
# checkout given; nothing of them is copied here.
#
#   tools/argo-examples.sh <argo-checkout>          validate each example; the counts
#   tools/argo-examples.sh <argo-checkout> --run    also run each one validate accepts
#   tools/argo-examples.sh <argo-checkout> --run NAME...   only these (file names without .yaml),
#                                                    run even when labelled no-test
#
# Runs use the stand-in images of tests/support/make_argo_example_images.sh (built from
# Debian packages and tagged with the names the examples use, since no registry is
# reachable; the script builds them when --run is given). BUILD_DIR names the build
# (./build by default); each run gets TIMEOUT seconds (default 300).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ] || [ ! -d "$1/examples" ]; then
  echo "usage: $0 <argo-checkout> [--run [NAME...]]   (a directory holding Argo's examples/)" >&2
  exit 2
fi
examples=$(cd "$1/examples" && pwd)
shift
run=false
if [ "${1:-}" = "--run" ]; then run=true; shift; fi
only=("$@")
build=${BUILD_DIR:-build}
plugboard=$build/plugboard
timeout=${TIMEOUT:-300}
[ -x "$plugboard" ] || { echo "$0: no $plugboard: build first (tools/setup.sh)" >&2; exit 2; }
$run && tests/support/make_argo_example_images.sh >/dev/null

valid=0 refused=0 succeeded=0 failed=0 skipped=0
declare -A by_feature=()
failures=()
while IFS= read -r -d '' file; do
  grep -q '^kind: Workflow$' "$file" || continue  # WorkflowTemplates etc. are not run alone
  name=${file#"$examples"/}
  if ((${#only[@]})); then
    base=$(basename "$file" .yaml)
    [[ " ${only[*]} " == *" $base "* ]] || continue
  fi
  if out=$("$plugboard" validate --plugins "$build/plugins" --templates "$examples" "$file" 2>&1); then
    valid=$((valid + 1))
    if ! $run; then echo "valid    $name"; continue; fi
    # Examples named on the command line run whatever their label says.
    if ((${#only[@]} == 0)) && grep -q 'workflows.argoproj.io/no-test' "$file"; then
      skipped=$((skipped + 1)); echo "valid    $name  (no-test: not run)"; continue
    fi
    start=$(date +%s%N)
    if timeout "$timeout" "$plugboard" run --plugins "$build/plugins" --templates "$examples" "$file" > /tmp/argo-example.out 2>&1; then
      succeeded=$((succeeded + 1))
      echo "Succeeded $name  ($(( ($(date +%s%N) - start) / 1000000 )) ms)"
    else
      failed=$((failed + 1)); failures+=("$name")
      label=$(sed -n 's/.*workflows.argoproj.io\/no-test: *"\{0,1\}\([a-z-]*\).*/\1/p' "$file" | head -1)
      echo "FAILED   $name${label:+ (labelled no-test: $label)}: $(grep -m1 -E 'Message:|error|Error' /tmp/argo-example.out || tail -1 /tmp/argo-example.out)"
    fi
  else
    refused=$((refused + 1))
    first=$(printf '%s\n' "$out" | head -n 1)
    echo "refused  $name  $first"
    feature=$(printf '%s\n' "$first" | sed -n "s/.*'\([A-Za-z.]*\)' is not supported.*/\1/p; s/.*[ :]\([A-Za-z.]*\): not supported.*/\1/p" | head -1)
    feature=${feature##*.}
    by_feature[${feature:-other}]=$(( ${by_feature[${feature:-other}]:-0} + 1 ))
  fi
done < <(find "$examples" -name '*.yaml' -print0 | sort -z)
echo
echo "valid: $valid; refused: $refused"
$run && echo "run: Succeeded $succeeded, did not succeed $failed, not run (no-test label) $skipped"
for f in "${!by_feature[@]}"; do echo "  refused for $f: ${by_feature[$f]}"; done | sort
((${#failures[@]})) && printf 'did not succeed: %s\n' "${failures[@]}"
exit 0

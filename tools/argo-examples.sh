#!/usr/bin/env bash
# Argo's examples as a suite: every Workflow under <argo-checkout>/examples/ is either
# refused by `plugboard validate` naming the feature it needs, or run by `plugboard run`
# and expected to reach Succeeded (what Argo's test/e2e/examples_test.go asks of every
# example without the `workflows.argoproj.io/no-test` label). Argo's files stay in the
# checkout given; nothing of them is copied here.
#
#   tools/argo-examples.sh <argo-checkout>            the counts, one line per example
#   tools/argo-examples.sh <argo-checkout> --run      also run the examples validate accepts
#
# How, in steps (BUILD_DIR names the build, ./build by default):
#   1. today: the front end alone. `core_tests --gtest_filter=ArgoExamples.*` with
#      ARGO_EXAMPLES=<checkout>/examples reads every example into the workflow model and
#      prints, per example, "read" or "refused" with its file:line problem, then the counts
#      by feature (tests/core/argo_examples_test.cc).
#   2. once `plugboard validate` reads Argo YAML (it then lists --templates in its help):
#      `plugboard validate --templates <checkout>/examples FILE` per example; exit 0 counts
#      as valid, exit 2 as refused with the first line it printed.
#   3. with --run, each valid example without the no-test label is run with
#      `plugboard run --templates <checkout>/examples FILE` against the stand-in images of
#      tests/support/make_argo_example_images.sh (built from Debian packages and tagged with
#      the names the examples use, since no registry is reachable), and counted as
#      Succeeded (exit 0) or not.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ] || [ ! -d "$1/examples" ]; then
  echo "usage: $0 <argo-checkout> [--run]   (a directory holding Argo's examples/)" >&2
  exit 2
fi
examples=$(cd "$1/examples" && pwd)
run=false
[ "${2:-}" = "--run" ] && run=true
build=${BUILD_DIR:-build}
plugboard=$build/tools/plugboard

if [ -x "$plugboard" ] && "$plugboard" validate --help 2>&1 | grep -q -- '--templates'; then
  valid=0 refused=0 succeeded=0 failed=0
  declare -A by_feature=()
  while IFS= read -r -d '' file; do
    grep -q '^kind: Workflow$' "$file" || continue  # WorkflowTemplates etc. are not run alone
    name=${file#"$examples"/}
    if out=$("$plugboard" validate --templates "$examples" "$file" 2>&1); then
      valid=$((valid + 1))
      echo "valid    $name"
      if $run && ! grep -q 'workflows.argoproj.io/no-test' "$file"; then
        if "$plugboard" run --templates "$examples" "$file" >/dev/null 2>&1; then
          succeeded=$((succeeded + 1)); echo "  Succeeded"
        else
          failed=$((failed + 1)); echo "  did not succeed"
        fi
      fi
    else
      refused=$((refused + 1))
      first=$(printf '%s\n' "$out" | head -n 1)
      echo "refused  $name  $first"
      feature=$(printf '%s\n' "$first" | sed -n 's/.*[ :]\([A-Za-z.]*\): not supported.*/\1/p')
      feature=${feature##*.}
      by_feature[${feature:-other}]=$(( ${by_feature[${feature:-other}]:-0} + 1 ))
    fi
  done < <(find "$examples" -name '*.yaml' -print0 | sort -z)
  echo
  echo "valid: $valid; refused: $refused"
  $run && echo "run: Succeeded $succeeded, did not succeed $failed"
  for f in "${!by_feature[@]}"; do echo "  $f: ${by_feature[$f]}"; done | sort
  exit 0
fi

# Step 1: the CLI does not read Argo YAML yet; the front end's own count.
ninja -C "$build" -j2 core_tests >/dev/null
ARGO_EXAMPLES=$examples "$build/tests/core_tests" --gtest_filter='ArgoExamples.*' \
  | sed -n '/^read  \|^refused  /p; /^example workflows:/,/^\[/p' | grep -v '^\['

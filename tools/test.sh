#!/usr/bin/env bash
# Every test on a fresh machine: set up, build, run the whole suite through CTest.
#
#   tools/test.sh                          the normal suite (./build): what CI runs
#   tools/test.sh --sanitize none          the same
#   tools/test.sh --sanitize address       the ASan+UBSan suite only (./build-asan)
#   tools/test.sh --sanitize thread        the TSan suite only (./build-tsan)
#   tools/test.sh --sanitize all           both sanitizer suites: run before each submission
#                                          (they do not fit CI's 10 minutes on 2 cores:
#                                          docs/reliability.md, "Time, and what CI runs")
#   tools/test.sh --sanitize address --compiler gcc    with g++ (./build-asan-gcc)
#
# Arguments after `--` go to ctest (e.g. `-- -R serve_tests`). BUILD_DIR moves the normal
# build, SANITIZE_BUILD_DIR a sanitizer build. Sanitizer builds use clang by default at -O1
# with line tables, and every process the suite starts (plugboard, plugboard-host, plugins)
# writes its reports under <build>/sanitizer-reports: the run fails when a test fails or
# when any report was written, even by a child whose exit status no test looks at.
# Suppressions (third-party defects only) are in tools/sanitizers/; docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize="" compiler=clang ctest_args=()
while (($#)); do
  case "$1" in
    --sanitize) sanitize=${2:?--sanitize needs address, thread or all}; shift 2 ;;
    --compiler) compiler=${2:?--compiler needs clang or gcc}; shift 2 ;;
    --) shift; ctest_args=("$@"); break ;;
    *) echo "usage: tools/test.sh [--sanitize none|address|thread|all] [--compiler clang|gcc] [-- ctest args]" >&2
       exit 2 ;;
  esac
done
jobs=$(nproc)

if [[ -z $sanitize || $sanitize == none ]]; then
  # A headless browser for the status page's rendering test (skipped without one); only the
  # tests need it, so the demo's set-up does not install it.
  SETUP_PACKAGES="chromium ${SETUP_PACKAGES:-}" ./tools/setup.sh
  exec ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$jobs" "${ctest_args[@]}"
fi
if [[ $sanitize == all ]]; then
  status=0
  "$0" --sanitize address --compiler "$compiler" -- "${ctest_args[@]}" || status=1
  "$0" --sanitize thread --compiler "$compiler" -- "${ctest_args[@]}" || status=1
  exit "$status"
fi

case "$sanitize" in
  address) dir=build-asan ;;
  thread) dir=build-tsan ;;
  *) echo "test.sh: --sanitize takes none, address, thread or all, not '$sanitize'" >&2; exit 2 ;;
esac
case "$compiler" in
  clang) export CC=clang CXX=clang++ SETUP_PACKAGES="clang llvm" ;;
  gcc) export CC=gcc CXX=g++ SETUP_PACKAGES=""; dir+=-gcc ;;
  *) echo "test.sh: --compiler takes clang or gcc, not '$compiler'" >&2; exit 2 ;;
esac
export BUILD_DIR=${SANITIZE_BUILD_DIR:-$dir} SETUP_CMAKE_ARGS="-DPLUGBOARD_SANITIZE=$sanitize"
./tools/setup.sh

reports="$PWD/$BUILD_DIR/sanitizer-reports"
supp="$PWD/tools/sanitizers"
rm -rf "$reports" && mkdir -p "$reports"
common="log_path=$reports/report:print_suppressions=0"
if [[ $sanitize == address ]]; then
  export ASAN_OPTIONS="$common:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="$common:print_stacktrace=1:halt_on_error=1"
else
  export TSAN_OPTIONS="$common:suppressions=$supp/tsan.supp:second_deadlock_stack=1"
fi

status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$jobs" "${ctest_args[@]}" || status=$?
shopt -s nullglob
found=("$reports"/report.*)
if ((${#found[@]})); then
  echo "test.sh: ${#found[@]} sanitizer report(s) in $reports:" >&2
  for f in "${found[@]}"; do echo "== $f" >&2; cat "$f" >&2; done
  status=1
fi
exit "$status"

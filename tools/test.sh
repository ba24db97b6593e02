#!/usr/bin/env bash
# Every test on a fresh machine: set up, build, run the whole suite through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/setup.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"

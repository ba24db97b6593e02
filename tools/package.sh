#!/usr/bin/env bash
# tools/package.sh [--build-dir DIR [--no-build]] [OUTDIR]
# Builds the Debian packages of plugboard into OUTDIR (default ./packages):
#   plugboard_<version>_<arch>.deb      the CLI, plugboard-host, deployers, example plugins,
#                                       man pages, bash completion
#   plugboard-dev_<version>_<arch>.deb  the SDK, the host kit, the CMake package, the Python SDK
# It configures a Release build for the /usr prefix in BUILD_DIR (default build-package),
# builds it and runs cpack (cmake/Packaging.cmake). With --build-dir DIR it packages that
# configured build tree instead, of any build type (cpack strips the binaries and installs
# for /usr); --no-build then skips building it (the package test does so with the test
# build tree). JOBS sets the build's parallelism (default: the number of cores). Needs
# dpkg-dev (dpkg-shlibdeps) for the packages' Depends.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${BUILD_DIR:-build-package}
configure=1
build=1
out=""
while (($#)); do
  case $1 in
    --build-dir) build_dir=$2; configure=0; shift 2 ;;
    --no-build) build=0; shift ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "package.sh: unknown option $1" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
out=${out:-packages}
# Files in the packages must not be group- or world-writable (and the runtime refuses
# plugin files that are).
umask 022
if ((configure)); then
  cmake_args=()
  if command -v ccache >/dev/null; then
    cmake_args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
    -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_TESTING=OFF "${cmake_args[@]}" >/dev/null
fi
if [ ! -f "$build_dir/CPackConfig.cmake" ]; then
  echo "package.sh: $build_dir is not a configured build tree" >&2
  exit 2
fi
if ((build)); then
  cmake --build "$build_dir" --target plugboard_packaged --parallel "${JOBS:-$(nproc)}"
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/plugboard_*.deb "$out"/plugboard-dev_*.deb
cpack --config "$build_dir/CPackConfig.cmake" -G DEB -B "$out" >/dev/null
rm -rf "$out/_CPack_Packages"
ls "$out"/*.deb

#!/usr/bin/env bash
# Installs the Debian packages plugboard needs that are missing, then configures and builds
# it into ./build (override with BUILD_DIR=...). Safe to run again: it only installs what
# is missing and only rebuilds what changed. SETUP_PACKAGES adds packages and
# SETUP_CMAKE_ARGS configure options (both space-separated; tools/test.sh --sanitize uses
# them); compilers come from CC and CXX as usual, and ccache is used when installed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ cmake ninja-build binutils pkg-config python3 python3-venv libpython3-dev podman runc catatonit
  libboost-dev libboost-program-options-dev
  libtomlplusplus-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libre2-dev libyaml-dev
  libgtest-dev libgmock-dev libbenchmark-dev libssl-dev
  libcbor-dev python3-cbor2
  busybox-static nodejs  # the stand-ins for the images of Argo's examples (tests/support/make_argo_example_images.sh)
  time curl ccache graphviz
  dpkg-dev lintian
  zsh fish  # the completion scripts' tests run them (tests/tools/docs_test.cc)
  python3-prometheus-client  # its parser reads serve's /metrics (tests/tools/metrics_test.cc)
)
read -r -a extra <<<"${SETUP_PACKAGES:-}"
packages+=("${extra[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Rootful podman's --userns=auto takes each container's ids from user "containers"'s range
# (podman's convention): with it, root in a workflow's container is no root on the host
# (docs/security.md, "What a workflow can reach"). Added once, where missing.
if [ "$(id -u)" -eq 0 ]; then
  for f in /etc/subuid /etc/subgid; do
    grep -q '^containers:' "$f" 2>/dev/null || echo 'containers:2147483647:2147483647' >>"$f"
  done
fi

# Plugin files and directories must not be group- or world-writable (the runtime refuses
# them), so build with a umask that does not make them so.
umask 022
build_dir=${BUILD_DIR:-build}
read -r -a cmake_args <<<"${SETUP_CMAKE_ARGS:-}"
if command -v ccache >/dev/null; then
  cmake_args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "${cmake_args[@]}" >/dev/null
cmake --build "$build_dir"

#!/usr/bin/env bash
# Installs the Debian packages plugboard needs that are missing, then configures and builds
# it into ./build (override with BUILD_DIR=...). Safe to run again: it only installs what
# is missing and only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ cmake ninja-build binutils pkg-config python3 python3-venv libpython3-dev podman runc catatonit
  libboost-dev libboost-program-options-dev
  libtomlplusplus-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libre2-dev
  libgtest-dev libgmock-dev libbenchmark-dev libssl-dev
  time curl
)
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

# Plugin files and directories must not be group- or world-writable (the runtime refuses
# them), so build with a umask that does not make them so.
umask 022
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" >/dev/null
cmake --build "$build_dir"

#!/usr/bin/env bash
# Makes the image tools/argo/plugin.yaml names, localhost/plugboard:<version> (the
# project's version in CMakeLists.txt), without any image registry (tools/lib/rootfs.sh):
#
#   tools/argo/image.sh [--build DIR] [--plugins DIR] [--image NAME] [--add PROGRAM]... [--podman PATH]
#
#   --build    the build tree holding plugboard, plugboard-host and deployers/ (default: build)
#   --plugins  the plugin .so files to put in the image (default: the build's plugins/)
#   --image    the name to give it (default: localhost/plugboard:<version>)
#   --add      another program to put in /usr/bin, with its libraries (e.g. /usr/bin/curl)
#   --podman   the podman binary (default: podman in PATH)
#
# In the image, every file owned by root and writable by root only:
#   /usr/bin/plugboard, /usr/bin/plugboard-host
#   /usr/lib/plugboard/deployers/{native,process}.so   where plugboard looks by default
#   /usr/lib/plugboard/plugins/*.so                    the plugin directory
#   /etc/plugboard/plugboard.toml                      [deploy]: the plugins built in run
#                                                      in-process, every other in a child
# The entrypoint is `plugboard serve --plugins /usr/lib/plugboard/plugins --listen
# 0.0.0.0:7878 --token-file /var/run/argo/token --config /etc/plugboard/plugboard.toml`;
# the container's arguments (the image's
# default: --log-level info) are more serve flags: --body-limit, --timeout, --poll-interval,
# --grace-period, --workers, --log-level, ... (docs/argo.md). Prints the image's name.
set -euo pipefail

usage() { sed -n '5,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
root_dir=$(cd "$(dirname "$0")/../.." && pwd)
build=$root_dir/build
plugins=""
image=""
podman=podman
adds=()
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || usage
  case $1 in
    --build) build=$2 ;;
    --plugins) plugins=$2 ;;
    --image) image=$2 ;;
    --add) adds+=("$2") ;;
    --podman) podman=$2 ;;
    *) usage ;;
  esac
  shift 2
done
[ -n "$plugins" ] || plugins=$build/plugins
if [ -z "$image" ]; then
  version=$(sed -n 's/^project(plugboard VERSION \([0-9.]*\).*/\1/p' "$root_dir/CMakeLists.txt")
  [ -n "$version" ] || { echo "argo-image: no project VERSION in CMakeLists.txt" >&2; exit 2; }
  image=localhost/plugboard:$version
fi
for program in "$build/plugboard" "$build/plugboard-host"; do
  [ -x "$program" ] || { echo "argo-image: no $program (build it, or pass --build)" >&2; exit 2; }
done
deployers=()
for name in native process; do
  file=$build/deployers/$name.so
  [ -f "$file" ] || { echo "argo-image: no $file (build the '$name' target)" >&2; exit 2; }
  deployers+=("$file")
done
shopt -s nullglob
plugin_files=("$plugins"/*.so)
shopt -u nullglob
((${#plugin_files[@]})) || { echo "argo-image: no plugin .so files in '$plugins'" >&2; exit 2; }
command -v "$podman" >/dev/null || { echo "argo-image: podman not found (install the Debian package podman)" >&2; exit 2; }

# shellcheck source=tools/lib/rootfs.sh
. "$root_dir/tools/lib/rootfs.sh"
rootfs=$(rootfs_new)
trap 'rootfs_cleanup "$rootfs"' EXIT
rootfs_install "$rootfs" 0755 "$build/plugboard" /usr/bin/plugboard
rootfs_install "$rootfs" 0755 "$build/plugboard-host" /usr/bin/plugboard-host
for file in "${deployers[@]}"; do
  rootfs_install "$rootfs" 0644 "$file" "/usr/lib/plugboard/deployers/$(basename "$file")"
done
for file in "${plugin_files[@]}"; do
  rootfs_install "$rootfs" 0644 "$file" "/usr/lib/plugboard/plugins/$(basename "$file")"
done
for program in "${adds[@]}"; do
  rootfs_install "$rootfs" 0755 "$program" "/usr/bin/$(basename "$program")"
done
install -d -m 0755 "$rootfs/var/run/argo"
# Plugins built into the image run in the runtime's process; any other plugin (added by a
# derived image or a mounted directory) runs in a child process of its own, so that one
# that crashes fails only its own templates.
install -d -m 0755 "$rootfs/etc/plugboard"
{
  echo '# Written by tools/argo/image.sh: the plugins built into this image run in-process,'
  echo '# every other plugin in a child process of its own (docs/argo.md, "Adding plugins").'
  echo '[deploy]'
  echo '"*" = "process"'
  "$build/plugboard" plugins list --plugins "$plugins" --json --deployers "$build/deployers" |
    python3 -c 'import json, sys
for name in sorted({p["name"] for p in json.load(sys.stdin)["plugins"]}):
    print(json.dumps(name) + " = \"native\"")'
} > "$rootfs/etc/plugboard/plugboard.toml"
chmod 0644 "$rootfs/etc/plugboard/plugboard.toml"
rootfs_add_libraries "$rootfs" "$build/plugboard" "$build/plugboard-host" "${deployers[@]}" \
  "${plugin_files[@]}" "${adds[@]}"
rootfs_import "$rootfs" "$image" "$podman" \
  --change 'ENV PATH=/usr/bin' \
  --change 'ENTRYPOINT ["/usr/bin/plugboard", "serve", "--plugins", "/usr/lib/plugboard/plugins", "--listen", "0.0.0.0:7878", "--token-file", "/var/run/argo/token", "--config", "/etc/plugboard/plugboard.toml"]' \
  --change 'CMD ["--log-level", "info"]' \
  --change 'EXPOSE 7878' \
  --change "LABEL org.plugboard.plugins=\"$(cd "$plugins" && ls -- *.so | tr '\n' ' ' | sed 's/ $//')\""
echo "$image"

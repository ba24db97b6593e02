#!/usr/bin/env bash
# Makes a container image that serves one plugin .so over protocol v1 (the `container`
# deployer runs it, docs/containers.md), without any image registry: a root file system
# holding plugboard-host, the plugin and the shared libraries they need (found with ldd)
# is imported with `podman import` (tools/lib/rootfs.sh).
#
#   tools/plugin-image.sh PLUGIN.so IMAGE [--host PATH] [--add PROGRAM]... [--label KEY=VALUE]...
#                         [--podman PATH]
#
#   IMAGE      the name to give it, e.g. localhost/hello:1.2.0
#   --host     plugboard-host to put in it (default: build/plugboard-host, else PATH)
#   --add      another program to put in it, with its libraries (e.g. /usr/bin/true)
#   --label    a label of the image, which its containers carry too
#   --podman   the podman binary (default: podman in PATH)
#
# The image's command is `/usr/bin/plugboard-host /plugin/<name>.so`. Libraries the plugin
# opens itself at run time (dlopen) are not found by ldd: add them with --add, or build the
# image another way. Prints the image's name on success.
set -euo pipefail

usage() { sed -n '6,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
plugin=$1
image=$2
shift 2
root_dir=$(cd "$(dirname "$0")/.." && pwd)
host=""
podman=podman
adds=()
labels=()
while [ $# -gt 0 ]; do
  case $1 in
    --host) host=$2; shift 2 ;;
    --add) adds+=("$2"); shift 2 ;;
    --label) labels+=(--change "LABEL $2"); shift 2 ;;
    --podman) podman=$2; shift 2 ;;
    *) usage ;;
  esac
done
[ -f "$plugin" ] || { echo "plugin-image: no plugin file '$plugin'" >&2; exit 2; }
if [ -z "$host" ]; then
  if [ -x "$root_dir/build/plugboard-host" ]; then host=$root_dir/build/plugboard-host
  else host=$(command -v plugboard-host || true); fi
fi
[ -n "$host" ] && [ -x "$host" ] || { echo "plugin-image: no plugboard-host (build it, or pass --host)" >&2; exit 2; }
command -v "$podman" >/dev/null || { echo "plugin-image: podman not found (install the Debian package podman)" >&2; exit 2; }

# shellcheck source=tools/lib/rootfs.sh
. "$root_dir/tools/lib/rootfs.sh"
rootfs=$(rootfs_new)
trap 'rootfs_cleanup "$rootfs"' EXIT
name=$(basename "$plugin")
rootfs_install "$rootfs" 0755 "$host" /usr/bin/plugboard-host
rootfs_install "$rootfs" 0644 "$plugin" "/plugin/$name"
for program in "${adds[@]}"; do
  rootfs_install "$rootfs" 0755 "$program" "/usr/bin/$(basename "$program")"
done
rootfs_add_libraries "$rootfs" "$host" "$plugin" "${adds[@]}"
rootfs_import "$rootfs" "$image" "$podman" \
  --change "CMD [\"/usr/bin/plugboard-host\", \"/plugin/$name\"]" \
  --change "LABEL org.plugboard.plugin=$name" "${labels[@]}"
echo "$image"

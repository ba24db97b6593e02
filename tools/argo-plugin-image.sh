#!/usr/bin/env bash
# Makes a container image of an Argo executor plugin written in Python, as Argo's
# documentation writes them (an HTTP server on `http.server`), without any image registry:
# a root file system holding this machine's python3 and its standard library, and the
# plugin's files in /plugin, imported with `podman import` (tools/lib/rootfs.sh). The
# image's command is `python3 -u /plugin/<SERVER.py>`; its plugin.yaml names the image
# (docs/argo.md, "Running Argo plugins with plugboard").
#
#   tools/argo-plugin-image.sh SERVER.py IMAGE [--with FILE]... [--podman PATH]
#
#   IMAGE    the name to give it, e.g. localhost/plugboard-example/argo-greeter:1.0.0
#   --with   another file for /plugin (a module the server imports)
#   --podman the podman binary (default: podman in PATH)
set -euo pipefail
usage() { sed -n '9,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
server=$1 image=$2
shift 2
withs=() podman=podman
while [ $# -gt 0 ]; do
  case $1 in
    --with) withs+=("$2"); shift 2 ;;
    --podman) podman=$2; shift 2 ;;
    *) usage ;;
  esac
done
# shellcheck source=tools/lib/rootfs.sh
. "$(dirname "$0")/lib/rootfs.sh"
rootfs=$(rootfs_new)
trap 'rootfs_cleanup "$rootfs"' EXIT
rootfs_add_python "$rootfs" >/dev/null
for f in "$server" "${withs[@]}"; do rootfs_install "$rootfs" 0644 "$f" "/plugin/$(basename "$f")"; done
rootfs_import "$rootfs" "$image" "$podman" \
  --change 'ENV PATH=/usr/bin' --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
  --change "CMD [\"python3\", \"-u\", \"/plugin/$(basename "$server")\"]"
echo "$image"

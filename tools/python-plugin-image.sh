#!/usr/bin/env bash
# Makes a container image of a plugin written in Python for a peer's protocol, without any
# image registry: a root file system holding this machine's python3 and its standard
# library, and the plugin's files in /plugin, imported with `podman import`
# (tools/lib/rootfs.sh).
#
#   tools/python-plugin-image.sh arcaflow PLUGIN.py IMAGE [--with FILE]... [--podman PATH]
#   tools/python-plugin-image.sh argo SERVER.py IMAGE [--with FILE]... [--podman PATH]
#
#   arcaflow  an Arcaflow plugin speaking ATP; the image also holds cbor2 (Debian's
#             python3-cbor2) and its entrypoint is `python3 /plugin/PLUGIN.py`, so that the
#             atp deployer runs it as Arcaflow does: `podman run -i IMAGE --atp`
#             (docs/arcaflow.md)
#   argo      an Argo executor plugin (an HTTP server on Python's http.server, as Argo's
#             documentation writes them); its command is `python3 -u /plugin/SERVER.py`,
#             and its plugin.yaml names the image (docs/argo.md)
#   IMAGE     the name to give it, e.g. localhost/plugboard-example/megaphone:1.0.0
#   --with    another file for /plugin (a module the plugin imports)
#   --podman  the podman binary (default: podman in PATH)
set -euo pipefail
usage() { sed -n '7,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 3 ] || usage
kind=$1 plugin=$2 image=$3
shift 3
[[ $kind == arcaflow || $kind == argo ]] || usage
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
for f in "$plugin" "${withs[@]}"; do rootfs_install "$rootfs" 0644 "$f" "/plugin/$(basename "$f")"; done
name=$(basename "$plugin")
if [ "$kind" = arcaflow ]; then
  cbor2=$(/usr/bin/python3 -c 'import cbor2, os; print(os.path.dirname(os.path.dirname(cbor2.__file__)))')
  mkdir -p "$rootfs$cbor2"
  cp -r "$cbor2"/cbor2 "$cbor2"/_cbor2*.so "$rootfs$cbor2/"
  find "$rootfs$cbor2" -name __pycache__ -prune -exec rm -rf {} +
  rootfs_import "$rootfs" "$image" "$podman" \
    --change "ENTRYPOINT [\"/usr/bin/python3\", \"/plugin/$name\"]" \
    --change 'CMD []' --change 'ENV PYTHONDONTWRITEBYTECODE=1'
else
  rootfs_import "$rootfs" "$image" "$podman" \
    --change 'ENV PATH=/usr/bin' --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
    --change "CMD [\"python3\", \"-u\", \"/plugin/$name\"]"
fi
echo "$image"

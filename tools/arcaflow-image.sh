#!/usr/bin/env bash
# Makes a container image of an Arcaflow-style Python plugin that speaks ATP (the `atp`
# deployer runs it as Arcaflow does: `podman run -i IMAGE --atp`, docs/arcaflow.md),
# without any image registry: a root file system holding this machine's python3, its
# standard library and cbor2 (Debian python3-cbor2), and the plugin's files in /plugin, is
# imported with `podman import` (tools/lib/rootfs.sh). The image's entrypoint is
# `python3 /plugin/<PLUGIN.py>`, so that `--atp` is its command.
#
#   tools/arcaflow-image.sh PLUGIN.py IMAGE [--with FILE]... [--podman PATH]
#
#   IMAGE    the name to give it, e.g. localhost/arcaflow/greeter:1.0.0
#   --with   another file for /plugin (a module the plugin imports)
#   --podman the podman binary (default: podman in PATH)
set -euo pipefail
usage() { sed -n '9,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
plugin=$1 image=$2
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
cbor2=$(/usr/bin/python3 -c 'import cbor2, os; print(os.path.dirname(os.path.dirname(cbor2.__file__)))')
mkdir -p "$rootfs$cbor2"
cp -r "$cbor2"/cbor2 "$cbor2"/_cbor2*.so "$rootfs$cbor2/"
find "$rootfs$cbor2" -name __pycache__ -prune -exec rm -rf {} +
rootfs_install "$rootfs" 0644 "$plugin" "/plugin/$(basename "$plugin")"
for f in "${withs[@]}"; do rootfs_install "$rootfs" 0644 "$f" "/plugin/$(basename "$f")"; done
rootfs_import "$rootfs" "$image" "$podman" \
  --change "ENTRYPOINT [\"/usr/bin/python3\", \"/plugin/$(basename "$plugin")\"]" \
  --change 'CMD []' --change 'ENV PYTHONDONTWRITEBYTECODE=1'
echo "$image"

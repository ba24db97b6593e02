#!/usr/bin/env bash
# Makes a container image of a plugin written in Python for a peer's protocol, without any
# image registry: a root file system holding this machine's python3 and its standard
# library, and the plugin's files in /plugin, imported with `podman import`
# (tools/lib/rootfs.sh).
#
#   tools/python-plugin-image.sh arcaflow PLUGIN.py IMAGE [--with FILE-OR-DIR]... [--podman PATH]
#   tools/python-plugin-image.sh argo SERVER.py IMAGE [--with FILE-OR-DIR]... [--podman PATH]
#
#   arcaflow  an Arcaflow plugin speaking ATP; the image also holds cbor2 and PyYAML
#             (Debian's python3-cbor2 and python3-yaml: what the Arcaflow SDK needs) and its
#             entrypoint is `python3 /plugin/PLUGIN.py`, so that the atp deployer runs it as
#             Arcaflow does: `podman run -i IMAGE --atp` (docs/arcaflow.md)
#   argo      an Argo executor plugin (an HTTP server on Python's http.server, as Argo's
#             documentation writes them); its command is `python3 -u /plugin/SERVER.py`,
#             and its plugin.yaml names the image (docs/argo.md)
#   IMAGE     the name to give it, e.g. localhost/plugboard-example/megaphone:1.0.0
#   --with    another file or directory for /plugin: a module or a package the plugin
#             imports (such as the Arcaflow SDK's src/arcaflow_plugin_sdk)
#   --podman  the podman binary (default: podman in PATH)
set -euo pipefail
usage() { sed -n '7,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
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
for f in "$plugin" "${withs[@]}"; do
  [ -e "$f" ] || { echo "$0: $f: no such file or directory" >&2; exit 2; }
done
# shellcheck source=tools/lib/rootfs.sh
. "$(dirname "$0")/lib/rootfs.sh"
rootfs=$(rootfs_new)
trap 'rootfs_cleanup "$rootfs"' EXIT
rootfs_add_python "$rootfs" >/dev/null
for f in "$plugin" "${withs[@]}"; do
  if [ -d "$f" ]; then  # a package: its files, without compiled caches
    install -d -m 0755 "$rootfs/plugin"
    tar -C "$(dirname "$f")" --exclude=__pycache__ -c "$(basename "$f")" | tar -C "$rootfs/plugin" -x
  else
    rootfs_install "$rootfs" 0644 "$f" "/plugin/$(basename "$f")"
  fi
done
name=$(basename "$plugin")
if [ "$kind" = arcaflow ]; then
  # cbor2 and PyYAML as Debian installs them (with their C parts, when there are any).
  packages=$(/usr/bin/python3 -c 'import cbor2, os; print(os.path.dirname(os.path.dirname(cbor2.__file__)))')
  mkdir -p "$rootfs$packages"
  for p in cbor2 _cbor2 yaml _yaml; do
    for f in "$packages/$p" "$packages/$p".*.so; do
      [ -e "$f" ] && cp -r "$f" "$rootfs$packages/"
    done
  done
  rootfs_add_libraries "$rootfs" $(find "$rootfs$packages" -name '*.so' | sed "s|^$rootfs||")
  [ -d "$rootfs$packages/yaml" ] || { echo "$0: PyYAML is not installed (apt-get install python3-yaml)" >&2; exit 2; }
  find "$rootfs$packages" -name __pycache__ -prune -exec rm -rf {} +
  rootfs_import "$rootfs" "$image" "$podman" \
    --change "ENTRYPOINT [\"/usr/bin/python3\", \"/plugin/$name\"]" \
    --change 'CMD []' --change 'ENV PYTHONDONTWRITEBYTECODE=1'
else
  rootfs_import "$rootfs" "$image" "$podman" \
    --change 'ENV PATH=/usr/bin' --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
    --change "CMD [\"python3\", \"-u\", \"/plugin/$name\"]"
fi
echo "$image"

#!/usr/bin/env bash
# Makes a container image of a plugin written in Python for a peer's protocol, without any
# image registry: a root file system holding this machine's python3 and its standard
# library, and the plugin's files in /plugin, imported with `podman import`
# (tools/lib/rootfs.sh).
#
#   tools/python-plugin-image.sh arcaflow PLUGIN.py IMAGE [--with FILE-OR-DIR]... [--deb PACKAGE]...
#                                [--label KEY=VALUE]... [--podman PATH]
#   tools/python-plugin-image.sh argo SERVER.py IMAGE [--with FILE-OR-DIR]... [--deb PACKAGE]...
#                                [--label KEY=VALUE]... [--podman PATH]
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
#             imports (such as the Arcaflow SDK's src/arcaflow_plugin_sdk); made
#             read-only for group and others, as the files of a plugin must be
#   --deb     a Debian package installed on this machine whose files the plugin needs,
#             with the python3-* packages it depends on (e.g. ansible-core; dash, whose
#             /bin/dash is then also /bin/sh, and coreutils for a plugin that runs commands)
#   --label   a label for the image
#   --podman  the podman binary (default: podman in PATH)
# Every image also has /etc/passwd and /etc/group naming root and nobody, and PATH set.
set -euo pipefail
usage() { sed -n '7,28p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 3 ] || usage
kind=$1 plugin=$2 image=$3
shift 3
[[ $kind == arcaflow || $kind == argo ]] || usage
withs=() debs=() labels=() podman=podman
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || usage
  case $1 in
    --with) withs+=("$2"); shift 2 ;;
    --deb) debs+=("$2"); shift 2 ;;
    --label) labels+=(--change "LABEL $2"); shift 2 ;;
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
chmod -R go-w "$rootfs/plugin"
name=$(basename "$plugin")
# cbor2 and PyYAML as Debian installs them (with their C parts): what the Arcaflow SDK needs.
[ "$kind" = arcaflow ] && debs=(python3-cbor2 python3-yaml "${debs[@]}")
if ((${#debs[@]})); then
  rootfs_add_debian_packages "$rootfs" "${debs[@]}" || { echo "$0: cannot add ${debs[*]}" >&2; exit 2; }
  find "$rootfs/usr/lib/python3" -name __pycache__ -prune -exec rm -rf {} + 2>/dev/null || true
fi
if [ -e "$rootfs/bin/dash" ] && [ ! -e "$rootfs/bin/sh" ]; then ln -s dash "$rootfs/bin/sh"; fi
install -d -m 0755 "$rootfs/etc" "$rootfs/root"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' \
  >"$rootfs/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
path='ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
if [ "$kind" = arcaflow ]; then
  rootfs_import "$rootfs" "$image" "$podman" "${labels[@]}" --change "$path" \
    --change "ENTRYPOINT [\"/usr/bin/python3\", \"/plugin/$name\"]" \
    --change 'CMD []' --change 'ENV PYTHONDONTWRITEBYTECODE=1'
else
  rootfs_import "$rootfs" "$image" "$podman" "${labels[@]}" --change "$path" \
    --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
    --change "CMD [\"python3\", \"-u\", \"/plugin/$name\"]"
fi
echo "$image"

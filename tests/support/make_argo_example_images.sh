#!/usr/bin/env bash
# Stand-ins for the container images Argo's examples run (argo-workflows examples/*.yaml),
# made on this machine from Debian packages, without any image registry, and tagged with
# the names the examples use. They are NOT the images of Docker Hub: each holds only what
# the examples ask of it, and says so in its label org.plugboard.stand-in.
#
#   docker.io/library/busybox:latest   Debian's busybox-static, its applets in /bin
#   docker.io/library/alpine:3.23      the same busybox as /bin/sh and the usual tools
#     (and alpine:latest)
#   docker.io/library/python:alpine3.23   that, with this machine's python3 (the Debian
#                                          package's) as python3 and python, its standard
#                                          library byte-compiled
#   docker.io/library/node:9.1-alpine  that, with this machine's node (the package nodejs)
#                                      and the libraries it links
#   docker.io/argoproj/argosay:v2      that, with bash and /argosay (tests/support/argosay),
#                                      which does what Argo's test image's argosay does
#   docker.io/argoproj/argosay:v1      busybox with a cowsay (tests/support/cowsay)
#   debian:9.1, debian:8.9, debian:latest, alpine:3.6, ubuntu:17.10
#                                      busybox with an /etc/os-release that says it is a
#                                      stand-in (the examples that loop over images cat it)
#
# Safe to run again: an image whose label says it was made from the same files is kept.
# Images are shared by everything on this machine: this script makes and tags these
# names only, and removes no image.
#   tests/support/make_argo_example_images.sh [BUILD_DIR]   (BUILD_DIR is not used)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
podman=${PODMAN:-podman}
# shellcheck source=tools/lib/rootfs.sh
. "$here/../../tools/lib/rootfs.sh"

busybox=/bin/busybox
if ! [ -x "$busybox" ]; then
  echo "make_argo_example_images: $busybox is missing: install Debian's busybox-static" \
    "(tools/setup.sh does)" >&2
  exit 1
fi
python=$(readlink -f /usr/bin/python3)
bash_bin=$(readlink -f /bin/bash)
node=$(readlink -f "$(command -v node || command -v nodejs || echo /usr/bin/node)")

# What the images are made of: an image made from the same is not made again.
stamp=$(cat "$0" "$here/argosay" "$here/cowsay" "$busybox" "$python" "$bash_bin" | sha256sum | cut -c1-16)
# The node image's own: a new nodejs package remakes it alone.
node_stamp=$(cat "$0" "$node" 2>/dev/null | sha256sum | cut -c1-16)
note="stand-in made by plugboard from Debian packages; not the registry's image"

# made IMAGE [STAMP]: whether IMAGE exists and was made from the same files.
made() {
  [ "$("$podman" image inspect --format '{{index .Labels "org.plugboard.stand-in"}}' "$1" \
    2>/dev/null || true)" = "${2:-$stamp}" ]
}

# busybox_root ROOTFS: busybox with a link per applet in /bin, /etc/passwd and /etc/group
# with root and nobody, as the busybox and alpine images have them.
busybox_root() {
  local rootfs=$1 applet
  rootfs_install "$rootfs" 0755 "$busybox" /bin/busybox
  for applet in $("$busybox" --list); do
    [ "$applet" = busybox ] || [ -e "$rootfs/bin/$applet" ] || ln -s busybox "$rootfs/bin/$applet"
  done
  install -d -m 0755 "$rootfs/etc" "$rootfs/root" "$rootfs/home" "$rootfs/var" "$rootfs/usr/local/bin"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' \
    >"$rootfs/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' >"$rootfs/etc/group"
}

# build IMAGE CMD [TAG...]: imports the root file system $rootfs as IMAGE, then tags it.
build() {
  local image=$1 cmd=$2
  shift 2
  rootfs_import "$rootfs" "$image" "$podman" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "CMD $cmd" \
    --change "LABEL org.plugboard.stand-in=${image_stamp:-$stamp}" \
    --change "LABEL org.plugboard.stand-in.note=\"$note\"" "${extra[@]}"
  local tag
  for tag in "$@"; do "$podman" tag "$image" "$tag"; done
  echo "made $image ($note)" >&2
}

rootfs=""
trap 'rootfs_cleanup "$rootfs" || true' EXIT
extra=()

if ! made docker.io/library/busybox:latest; then
  rootfs=$(rootfs_new)
  busybox_root "$rootfs"
  build docker.io/library/busybox:latest '["sh"]'
  rootfs_cleanup "$rootfs"
fi

if ! made docker.io/library/alpine:3.23; then
  rootfs=$(rootfs_new)
  busybox_root "$rootfs"
  build docker.io/library/alpine:3.23 '["/bin/sh"]' docker.io/library/alpine:latest
  rootfs_cleanup "$rootfs"
fi

if ! made docker.io/library/python:alpine3.23; then
  rootfs=$(rootfs_new)
  busybox_root "$rootfs"
  stdlib=$(rootfs_add_python "$rootfs")
  # Byte-compiled, as the registry's image ships its standard library: its root is
  # read-only in Argo's sidecars, so a start would compile every module it imports.
  "$python" -m compileall -q -j 0 -d "$stdlib" "$rootfs$stdlib" >/dev/null
  ln -s /usr/bin/python3 "$rootfs/usr/local/bin/python3"
  ln -s /usr/bin/python3 "$rootfs/usr/local/bin/python"
  extra=(--change 'ENV PYTHONDONTWRITEBYTECODE=1')
  build docker.io/library/python:alpine3.23 '["python3"]'
  extra=()
  rootfs_cleanup "$rootfs"
fi

if ! made docker.io/library/node:9.1-alpine "$node_stamp"; then
  if ! [ -x "$node" ]; then
    echo "make_argo_example_images: no node: install the Debian package nodejs (tools/setup.sh does)" >&2
    exit 1
  fi
  rootfs=$(rootfs_new)
  busybox_root "$rootfs"
  rootfs_install "$rootfs" 0755 "$node" /usr/local/bin/node
  rootfs_add_libraries "$rootfs" "$node"
  ln -s node "$rootfs/usr/local/bin/nodejs"
  image_stamp=$node_stamp
  build docker.io/library/node:9.1-alpine '["node"]'
  image_stamp=""
  rootfs_cleanup "$rootfs"
fi

if ! made docker.io/argoproj/argosay:v2; then
  rootfs=$(rootfs_new)
  busybox_root "$rootfs"
  rm -f "$rootfs/bin/bash"
  rootfs_install "$rootfs" 0755 "$bash_bin" /bin/bash
  rootfs_add_libraries "$rootfs" "$bash_bin"
  rootfs_install "$rootfs" 0755 "$here/argosay" /argosay
  extra=(--change 'ENTRYPOINT ["/argosay"]')
  build docker.io/argoproj/argosay:v2 '[]'
  extra=()
  rootfs_cleanup "$rootfs"
fi
if ! made docker.io/argoproj/argosay:v1; then
  rootfs=$(rootfs_new)
  busybox_root "$rootfs"
  rootfs_install "$rootfs" 0755 "$here/cowsay" /usr/games/cowsay
  extra=(--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/games')
  build docker.io/argoproj/argosay:v1 '["cowsay"]'
  extra=()
  rootfs_cleanup "$rootfs"
fi

if ! made docker.io/library/debian:9.1; then
  rootfs=$(rootfs_new)
  busybox_root "$rootfs"
  printf '%s\n' 'PRETTY_NAME="busybox, a stand-in made by plugboard for the images of Argo'"'"'s examples"' \
    'NAME="plugboard stand-in"' 'ID=plugboard-stand-in' >"$rootfs/etc/os-release"
  build docker.io/library/debian:9.1 '["sh"]' docker.io/library/debian:8.9 \
    docker.io/library/debian:latest docker.io/library/alpine:3.6 docker.io/library/ubuntu:17.10
  rootfs_cleanup "$rootfs"
fi
rootfs=""

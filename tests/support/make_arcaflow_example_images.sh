#!/usr/bin/env bash
# Stand-ins for the plugin images arcaflow-workflows' basic-examples run, made on this
# machine from each plugin's source checkout, without any image registry, and tagged with
# the names the workflows use. They are NOT quay.io's images: each holds this machine's
# python3 (Debian's), python3-cbor2 and python3-yaml, the Arcaflow plugin SDK from its
# source checkout, and the plugin's own modules, run as its Dockerfile's ENTRYPOINT runs
# them (tools/python-plugin-image.sh); the label org.plugboard.stand-in says so.
#
#   quay.io/arcalot/arcaflow-plugin-example:0.5.1          from arcaflow-plugin-example
#   quay.io/arcalot/arcaflow-plugin-metadata:0.5.0         from arcaflow-plugin-metadata, with
#       Debian's ansible-core and python3-ansible-runner (and dash, coreutils, libc-bin's
#       C.UTF-8 locale and libssl3's providers, which ansible's local connection and
#       python3-cryptography need)
#   quay.io/arcalot/arcaflow-plugin-template-python:0.4.0  from arcaflow-plugin-template-python
#   quay.io/arcalot/arcaflow-plugin-utilities:0.6.1        from arcaflow-plugin-utilities (the
#       engine's fixtures/test-subworkflow use it; its module imports only the standard
#       library and the SDK)
#
#   tests/support/make_arcaflow_example_images.sh PLUGINS_SRC
#
# PLUGINS_SRC holds the checkouts, each named as its repository with or without the
# `arcaflow-` prefix: plugin-example, plugin-metadata, plugin-template-python,
# plugin-utilities and plugin-sdk-python. The version of a checkout is not checked: the tag
# is the name the workflows use, whatever the checkout's version. Safe to run again: an image whose label
# says it was made from the same files is kept. Only these names are made; no image is
# removed. PODMAN names the podman binary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tool=$here/../../tools/python-plugin-image.sh
podman=${PODMAN:-podman}
[ $# -eq 1 ] || { sed -n '19,19p' "$0" | sed 's/^# *//' >&2; exit 2; }
src=$(cd "$1" && pwd)

# checkout NAME: the checkout of arcaflow-NAME in PLUGINS_SRC.
checkout() {
  local d
  for d in "$src/$1" "$src/arcaflow-$1"; do
    [ -d "$d" ] && { echo "$d"; return; }
  done
  echo "make_arcaflow_example_images: no checkout of arcaflow-$1 in $src (as $1 or arcaflow-$1)" >&2
  exit 1
}
sdk=$(checkout plugin-sdk-python)/src/arcaflow_plugin_sdk
[ -f "$sdk/plugin.py" ] || { echo "make_arcaflow_example_images: $sdk is not the Arcaflow SDK's package" >&2; exit 1; }
note="stand-in made by plugboard from the plugin's source and Debian packages; not quay.io's image"

# make IMAGE CHECKOUT-NAME [--deb PACKAGE]...: the plugin of CHECKOUT-NAME as IMAGE. Its
# Dockerfile names the package directory (ARG package=...) and the script its ENTRYPOINT
# runs; the other modules of the package go beside that script, as in the image's WORKDIR.
make() {
  local image=$1 dir package entry stamp f
  dir=$(checkout "$2")
  shift 2
  package=$(sed -n 's/^ARG package=\(.*\)$/\1/p' "$dir/Dockerfile" | head -1)
  entry=$(sed -n 's/^ENTRYPOINT \[ *"python3\{0,1\}", *"\([^"]*\)".*/\1/p' "$dir/Dockerfile" | head -1)
  if [ -z "$package" ] || [ -z "$entry" ] || [ ! -f "$dir/$package/$entry" ]; then
    echo "make_arcaflow_example_images: $dir/Dockerfile names no ARG package and ENTRYPOINT [\"python\", \"<script>\"] found in the checkout" >&2
    exit 1
  fi
  local withs=(--with "$sdk")
  for f in "$dir/$package"/*.py; do
    [ "$(basename "$f")" = "$entry" ] || withs+=(--with "$f")
  done
  stamp=$( (cat "$0" "$tool" "$here/../../tools/lib/rootfs.sh" "$dir/$package"/*.py; echo "$*";
    find "$sdk" -name '*.py' ! -name 'test_*' | sort | xargs cat) | sha256sum | cut -c1-16)
  if [ "$("$podman" image inspect --format '{{index .Labels "org.plugboard.stand-in"}}' "$image" \
    2>/dev/null || true)" = "$stamp" ]; then
    echo "kept $image ($note)"
    return
  fi
  "$tool" arcaflow "$dir/$package/$entry" "$image" "${withs[@]}" "$@" --podman "$podman" \
    --label "org.plugboard.stand-in=$stamp" --label "org.plugboard.stand-in.note=\"$note\"" >/dev/null
  echo "made $image from $dir ($note)"
}

make quay.io/arcalot/arcaflow-plugin-example:0.5.1 plugin-example
make quay.io/arcalot/arcaflow-plugin-template-python:0.4.0 plugin-template-python
make quay.io/arcalot/arcaflow-plugin-utilities:0.6.1 plugin-utilities
make quay.io/arcalot/arcaflow-plugin-metadata:0.5.0 plugin-metadata \
  --deb ansible-core --deb python3-ansible-runner --deb dash --deb coreutils --deb libc-bin --deb libssl3

#!/bin/sh
# The images the Argo agent-pod test uses (a CTest fixture: tests/CMakeLists.txt): the
# image tools/argo/plugin.yaml names, made by tools/argo/image.sh from this build, and the
# same image with curl added, which plays Argo's agent.
#   tests/support/make_argo_images.sh BUILD_DIR
set -eu
build=$1
image_sh=$(dirname "$0")/../../tools/argo/image.sh
"$image_sh" --build "$build"
"$image_sh" --build "$build" --add /usr/bin/curl --image localhost/plugboard-test/argo-client:latest

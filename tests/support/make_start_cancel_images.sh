#!/bin/sh
# The images of the start-cancel tests (a CTest fixture: tests/CMakeLists.txt): the argo
# deployer's test sidecar and the ATP test plugin.
#   tests/support/make_start_cancel_images.sh BUILD_DIR
set -eu
here=$(dirname "$0")
"$here/make_argo_sidecar_image.sh" "$1"
"$here/make_atp_images.sh" "$1"

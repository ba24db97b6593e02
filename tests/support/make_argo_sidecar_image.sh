#!/usr/bin/env bash
# The image of the argo deployer's test sidecar (a CTest fixture: tests/CMakeLists.txt):
# tests/support/argo_sidecar/server.py made into an image by tools/python-plugin-image.sh,
# and the example plugin plugins/argo/megaphone.py.
#   tests/support/make_argo_sidecar_image.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/../../tools/python-plugin-image.sh" argo "$here/argo_sidecar/server.py" \
  localhost/plugboard-test/argo-sidecar:latest >/dev/null
# And the bundled example Argo plugin's (examples/argo.toml; tools/demo.sh makes it too).
"$here/../../tools/python-plugin-image.sh" argo "$here/../../plugins/argo/megaphone.py" \
  localhost/plugboard-example/megaphone:1.0.0 >/dev/null

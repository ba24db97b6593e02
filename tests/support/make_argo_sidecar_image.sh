#!/usr/bin/env bash
# The image of the argo deployer's test sidecar (a CTest fixture: tests/CMakeLists.txt):
# tests/support/argo_sidecar/server.py made into an image by tools/python-plugin-image.sh,
# the example plugin plugins/argo/megaphone.py, and a stand-in for the python images of
# Argo's own plugins (`python -c SCRIPT`) for tests/support/argo_python_plugin.
#   tests/support/make_argo_sidecar_image.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/../../tools/python-plugin-image.sh" argo "$here/argo_sidecar/server.py" \
  localhost/plugboard-test/argo-sidecar:latest >/dev/null
# And the bundled example Argo plugin's (examples/argo.toml; tools/demo.sh makes it too).
"$here/../../tools/python-plugin-image.sh" argo "$here/../../plugins/argo/megaphone.py" \
  localhost/plugboard-example/megaphone:1.0.0 >/dev/null
# Python alone, for plugins whose manifest brings its script (tests/support/argo_python_plugin).
"$here/../../tools/python-plugin-image.sh" argo "$here/argo_python_plugin/server.py" \
  localhost/plugboard-test/argo-python:latest >/dev/null

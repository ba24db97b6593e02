#!/bin/sh
# The container image the atp container tests use: the ATP test plugin with
# tools/python-plugin-image.sh (a CTest fixture: tests/CMakeLists.txt).
#   tests/support/make_atp_images.sh BUILD_DIR
set -eu
root=$(dirname "$0")/../..
"$root/tools/python-plugin-image.sh" arcaflow "$root/tests/fixtures/atp/atp_fixture.py" \
  localhost/plugboard-test/atp-fixture:latest --with "$root/plugins/arcaflow/atpkit.py"

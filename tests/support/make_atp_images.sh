#!/bin/sh
# The container images the atp container tests use: the ATP test plugin, and a plugin
# that needs PyYAML and its own package (packed as a directory), with
# tools/python-plugin-image.sh (a CTest fixture: tests/CMakeLists.txt).
#   tests/support/make_atp_images.sh BUILD_DIR
set -eu
root=$(dirname "$0")/../..
"$root/tools/python-plugin-image.sh" arcaflow "$root/tests/fixtures/atp/atp_fixture.py" \
  localhost/plugboard-test/atp-fixture:latest --with "$root/plugins/arcaflow/atpkit.py"
# A plugin that needs PyYAML and a package of its own, packed as a directory.
"$root/tools/python-plugin-image.sh" arcaflow "$root/tests/fixtures/atp/packaged/greeter/plugin.py" \
  localhost/plugboard-test/atp-packed:latest --with "$root/plugins/arcaflow/atpkit.py" \
  --with "$root/tests/fixtures/atp/packaged/greeter"

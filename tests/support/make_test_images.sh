#!/bin/sh
# The container images the container tests use, made from this build's plugins with
# tools/plugin-image.sh (a CTest fixture: tests/CMakeLists.txt).
#   tests/support/make_test_images.sh BUILD_DIR
set -eu
build=$1
tools=$(dirname "$0")/../../tools
# The label marks the containers made from these images, so that the tests count only
# those, whatever else runs on the machine.
label=org.plugboard.test=container-tests
"$tools/plugin-image.sh" "$build/plugins/hello.so" localhost/plugboard-test/hello:latest \
  --host "$build/plugboard-host" --add /usr/bin/true --label "$label"
"$tools/plugin-image.sh" "$build/tests/fixtures/crashy.so" localhost/plugboard-test/crashy:latest \
  --host "$build/plugboard-host" --label "$label"
# The image examples/containers.toml names (tools/demo.sh makes it the same way).
podman tag localhost/plugboard-test/hello:latest localhost/plugboard/hello:1.2.0

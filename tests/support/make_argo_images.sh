#!/bin/sh
# The images the Argo agent-pod test uses (a CTest fixture: tests/CMakeLists.txt): the
# image tools/argo/plugin.yaml names, made by tools/argo/image.sh from this build; the same
# image with curl added, which plays Argo's agent; and an image FROM the first with a
# plugin added, as docs/argo.md tells users to add theirs (the test fixtures crash_on_load,
# which aborts when it is loaded, parallel_probe, which succeeds, and scripted, which
# answers with the request it received for the workflows replayed on the sidecar).
#   tests/support/make_argo_images.sh BUILD_DIR
set -eu
build=$1
image_sh=$(dirname "$0")/../../tools/argo/image.sh
base=$("$image_sh" --build "$build" | tail -n 1)
"$image_sh" --build "$build" --add /usr/bin/curl --image localhost/plugboard-test/argo-client:latest
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp "$build/tests/fixtures/crash_on_load.so" "$build/tests/fixtures/parallel_probe.so" \
  "$build/tests/fixtures/scripted.so" "$context/"
cat > "$context/Containerfile" <<CONTAINERFILE
FROM $base
COPY --chown=0:0 --chmod=0644 crash_on_load.so parallel_probe.so scripted.so /usr/lib/plugboard/plugins/
CONTAINERFILE
podman --runtime runc --cgroup-manager cgroupfs build --quiet --pull=never --network=none \
  --tag localhost/plugboard-test/argo-added:latest "$context"

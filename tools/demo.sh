#!/usr/bin/env bash
# The main job on a fresh machine: set up, build, then list the bundled plugins (read
# without loading) and run the bundled example workflows on them (the second runs steps
# through the `process` deployer, in child processes; the third adds Python plugins, in a
# child process and embedded; the fourth runs hello natively, as Python and from a
# container image, which it first makes with tools/plugin-image.sh; the fifth passes outputs
# through an Argo executor plugin's sidecar, whose image tools/python-plugin-image.sh makes;
# the last is an Argo Workflow, run unchanged: a dag of plugin templates, a loop, an
# expression and an exit handler).
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/setup.sh
build_dir=${BUILD_DIR:-build}
"$build_dir/plugboard" plugins list --plugins "$build_dir/plugins"
echo
"$build_dir/plugboard" run examples/hello.toml --plugins "$build_dir/plugins"
echo
"$build_dir/plugboard" run examples/deployers.toml --plugins "$build_dir/plugins"
echo
"$build_dir/plugboard" run examples/mixed.toml --plugins "$build_dir/plugins" --registry examples/registry.toml
echo
"$build_dir/plugboard" run examples/arcaflow.toml --plugins "$build_dir/plugins" --registry examples/registry.toml
echo
"$build_dir/plugboard" run examples/arcaflow/workflow.yaml --input examples/arcaflow/input.yaml --registry examples/registry.toml
echo
./tools/plugin-image.sh "$build_dir/plugins/hello.so" localhost/plugboard/hello:1.2.0 --host "$build_dir/plugboard-host"
"$build_dir/plugboard" run examples/containers.toml --plugins "$build_dir/plugins" --registry examples/registry.toml
echo
if [ "$(id -u)" -eq 0 ]; then
  ./tools/python-plugin-image.sh argo plugins/argo/megaphone.py localhost/plugboard-example/megaphone:1.0.0 >/dev/null
  "$build_dir/plugboard" run examples/argo.toml --plugins "$build_dir/plugins" --registry examples/registry.toml
else
  echo "examples/argo.toml skipped: the argo deployer reaches a sidecar without a network as root;" \
    "with rootless podman, set reach = \"publish\" in examples/registry.toml (docs/argo.md)"
fi
echo
"$build_dir/plugboard" run examples/argo/hello-dag.yaml --plugins "$build_dir/plugins"

#!/usr/bin/env bash
# The main job on a fresh machine: set up, build, then list the bundled plugins (read
# without loading) and run the bundled example workflows on them (the second runs steps
# through the `process` deployer, in child processes; the third adds Python plugins, in a
# child process and embedded).
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

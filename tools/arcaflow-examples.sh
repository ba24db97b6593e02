#!/usr/bin/env bash
# Arcaflow's example workflows as a suite: every workflow of arcalot/arcaflow-workflows
# basic-examples/ (and, with --engine, the engine's fixtures/test-subworkflow/*,
# fixtures/test-readFile/* and workflow/test_workflows/*) is validated, and with --run run
# as its README runs it, and compared with what the Arcaflow engine's semantics give, as
# tests/fixtures/arcaflow-examples/expected.yaml writes it down (each entry says why).
#
#   tools/arcaflow-examples.sh WORKFLOWS-CHECKOUT [--plugins-src DIR] [--engine ENGINE-CHECKOUT]
#                              [--run] [--only TEXT]...
#
# The plugin images the examples and the fixtures name
# (quay.io/arcalot/arcaflow-plugin-example:0.5.1, -metadata:0.5.0, -template-python:0.4.0,
# -utilities:0.6.1) are not pulled: they are stand-ins made on this machine from the
# plugins' source checkouts in --plugins-src (default: the directory holding
# WORKFLOWS-CHECKOUT) by tests/support/make_arcaflow_example_images.sh, with Debian's
# python3, python3-cbor2 and python3-yaml and the Arcaflow SDK's source, tagged with the
# names the workflows use (made when missing; it says which it made). Each image
# is first checked as an ATP plugin (its schema read by `plugboard validate`; with --run,
# one call of its step too).
#
# Prints a table (passed / FAILED / refused with the reason) and exits 1 when an
# expectation failed, 2 on bad usage. BUILD_DIR names the build (./build by default); each
# command gets TIMEOUT seconds (default 300). The atp schema cache is a new one per run of
# the suite (so that the check sees each plugin's schema arrive).
set -euo pipefail
exec python3 "$(dirname "$0")/lib/arcaflow_examples.py" "$@"

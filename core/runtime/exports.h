// core/runtime/exports.h: what a command (tools/plugboard) uses of the folders below
// core/runtime/ directly, besides what config.h and runtime.h bring.
//
// The CLI is compiled seeing core/runtime/ alone (core/CMakeLists.txt): a header of a lower
// folder reaches it only through a header of this one. This list is where that is decided,
// so that what the commands depend on below the runtime stays visible in one place; a new
// need is added here, not worked around.
#ifndef PLUGBOARD_CORE_RUNTIME_EXPORTS_H_
#define PLUGBOARD_CORE_RUNTIME_EXPORTS_H_

#include "core/base/build_info.h"    // version: what this build is
#include "core/base/defaults.h"      // docs: the default of each option
#include "core/base/expected.h"
#include "core/base/read_file.h"     // call, graph: files named on the command line
#include "core/base/text.h"
#include "core/launch/deployer.h"    // inspect, signals: deployer modules, cancelling a start
#include "core/launch/module.h"      // inspect: a deployer module's manifest
#include "core/launch/start_control.h"  // signals: Ctrl-C stops a start
#include "core/manifests/catalog.h"  // plugins, inspect
#include "core/manifests/elf_section.h"  // inspect: a plugin file's manifest section
#include "core/manifests/manifest.h"  // new: the manifest of a scaffolded plugin
#include "core/routing/timed_dispatch.h"  // exec: a call under its deadline
#include "core/serving/accept_limits.h"  // serve: the descriptor and connection limits
#include "core/serving/argo.h"       // exec: Argo's request and reply
#include "core/serving/http_server.h"  // serve
#include "core/frontends/arcaflow_values.h"    // run: Arcaflow workflows
#include "core/frontends/arcaflow_known.h"     // validate: Arcaflow steps' inputs
#include "core/frontends/arcaflow_workflow.h"  // validate: Arcaflow workflows
#include "core/frontends/front_end.h"  // run, validate: Argo YAML
#include "core/workflows/engine.h"     // run: model workflows, node tree
#include "core/workflows/leaf_calls.h"  // run: model workflows
#include "core/workflows/run_report.h"  // run, progress: TOML's step report
#include "core/workflows/step_report.h"  // run: TOML workflows on the engine
#include "core/workflows/workflow.h"  // graph

#endif  // PLUGBOARD_CORE_RUNTIME_EXPORTS_H_

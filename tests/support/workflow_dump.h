// tests/support/workflow_dump.h: everything a read TOML workflow holds, and its problems,
// as one JSON value, to show that two ways of reading a file give the same result.
#ifndef PLUGBOARD_TESTS_SUPPORT_WORKFLOW_DUMP_H_
#define PLUGBOARD_TESTS_SUPPORT_WORKFLOW_DUMP_H_

#include "core/workflows/workflow.h"

namespace plugboard::testing {

inline core::Json positionJson(const core::SourcePos& pos) {
  return core::Json::array({pos.line, pos.column});
}

inline core::Json workflowDump(const core::LoadedWorkflow& loaded) {
  core::Json out = core::Json::object();
  core::Json& problems = out["problems"] = core::Json::array();
  for (const auto& p : loaded.problems) problems.push_back(p.oneLine());
  if (!loaded.workflow) return out;
  const core::Workflow& wf = *loaded.workflow;
  core::Json& w = out["workflow"];
  w = {{"name", wf.name}, {"description", wf.description}, {"file", wf.file.string()}};
  for (const auto& in : wf.inputs) {
    w["inputs"].push_back({{"name", in.name},
                           {"default", in.default_value.value_or(core::Json("<none>"))},
                           {"has_default", in.default_value.has_value()},
                           {"description", in.description},
                           {"pos", positionJson(in.pos)}});
  }
  for (const auto& s : wf.steps) {
    w["steps"].push_back(
        {{"id", s.id},
         {"plugin", s.plugin},
         {"version", s.version},
         {"rpc", s.rpc},
         {"args", s.args},
         {"parameters", s.parameters},
         {"depends", s.depends},
         {"timeout", s.timeout ? s.timeout->count() : -1},
         {"retry", {s.retry.limit, s.retry.backoff.count(), s.retry.factor}},
         {"poll", s.poll},
         {"deployer", s.deployer},
         {"deploy_options", s.deploy_options},
         {"deploy_pos", positionJson(s.deploy_pos)},
         {"when", s.when},
         {"items", s.items},
         {"exit", s.exit},
         {"pos", positionJson(s.pos)}});
  }
  for (const auto& o : wf.outputs) {
    w["outputs"].push_back({{"name", o.name}, {"value", o.value}, {"pos", positionJson(o.pos)}});
  }
  return out;
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_WORKFLOW_DUMP_H_

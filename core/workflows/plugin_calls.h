// core/workflows/plugin_calls.h: the runner's calls to installed plugins
// (core/workflows/step_calls.h), a thin client of the dispatcher's resolve() and call().
//
// Each step is resolved once per run (its key, version, RPC, and the deployer it
// chooses; registry plugins by name too): check() tests its args against the input schema
// of a plugin whose manifest is known before it starts, and reports a step whose deployer
// or artifact cannot be chosen as an Error; call() calls the route, on the worker. A plugin
// placed through a deployer has its args checked against the schema it declares once
// started.
//
// Thread-safety: as StepCalls. The dispatcher must outlive this object and any call it
// abandoned.
#ifndef PLUGBOARD_CORE_WORKFLOWS_PLUGIN_CALLS_H_
#define PLUGBOARD_CORE_WORKFLOWS_PLUGIN_CALLS_H_

#include <memory>
#include <mutex>
#include <unordered_map>
#include "core/routing/dispatcher.h"

#include "core/workflows/step_calls.h"

namespace plugboard::core {

// The first problem of `args` against the input schema `manifest` declares for `rpc`,
// naming the plugin; nullopt when they pass or it declares none.
std::optional<std::string> schemaProblem(const Manifest& manifest, const std::string& rpc,
                                         const Json& args);

// The members a workflow's plugin call adds to its request, as JSON text, as Argo's agent
// sends them (ExecuteTemplateArgs; pkg/plugins/executor/objectmeta.go):
// {"workflow":{"metadata":{"name":W[,"namespace":N,"uid":U]}},"template":T}; namespace
// and uid when not empty. The one place a workflow's request context is written.
std::string templateContextText(std::string_view workflow, std::string_view nspace,
                                std::string_view uid, const Json& tmpl);

class PluginCalls final : public StepCalls {
 public:
  explicit PluginCalls(Dispatcher& dispatcher);

  std::optional<Outcome> check(const WorkflowStep& step, const Json& args) override;
  Dispatch call(StepCall call, CallControl& control) override;

 private:
  // Where a step's calls go, resolved once per step and run: placing a registry artifact
  // reads its file, and requeues and retries ask again.
  std::shared_ptr<const Route> route(const WorkflowStep& step);

  Dispatcher& dispatcher_;
  std::mutex mu_;  // guards routes_
  std::unordered_map<const WorkflowStep*, std::shared_ptr<const Route>> routes_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_PLUGIN_CALLS_H_

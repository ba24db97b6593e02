// core/workflows/plugin_calls.h: the runner's calls to installed plugins
// (core/workflows/step_calls.h).
//
// A step whose plugin is in the plugin directories, with no `deploy` of its own, goes
// through the dispatcher, and check() tests its args against the input schema of the
// plugin the dispatcher would call. A step with a deployer of its own, or whose plugin
// only the registry knows, is placed and started by the launcher (core/launch/launcher.h) on its
// first call, on the worker, and its args are checked against the schema that plugin
// declares there. check() reports a step whose deployer or artifact cannot be chosen as
// an Error.
//
// Thread-safety: as StepCalls. The dispatcher and the launcher must outlive this object
// and any call it abandoned.
#ifndef PLUGBOARD_CORE_WORKFLOWS_PLUGIN_CALLS_H_
#define PLUGBOARD_CORE_WORKFLOWS_PLUGIN_CALLS_H_

#include <memory>
#include <mutex>
#include <unordered_map>
#include "core/routing/dispatcher.h"

#include "core/launch/launcher.h"
#include "core/workflows/step_calls.h"

namespace plugboard::core {

class PluginCalls final : public StepCalls {
 public:
  // `launcher` may be null: every step goes through the dispatcher.
  PluginCalls(Dispatcher& dispatcher, Launcher* launcher);

  std::optional<Outcome> check(const WorkflowStep& step, const Json& args) override;
  Dispatch call(StepCall call, CallControl& control) override;

 private:
  // How a step is called: through the dispatcher, or through the plugin `target` names
  // (or its error when it cannot be placed). Decided once per step and run: placing a
  // registry artifact reads its file, and requeues and retries ask again.
  struct Route {
    bool dispatched = true;
    Expected<LaunchTarget> target = Error("not placed");
  };
  std::shared_ptr<const Route> route(const WorkflowStep& step);

  Dispatcher& dispatcher_;
  Launcher* launcher_;
  std::mutex mu_;  // guards routes_
  std::unordered_map<const WorkflowStep*, std::shared_ptr<const Route>> routes_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_PLUGIN_CALLS_H_

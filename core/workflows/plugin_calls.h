// core/workflows/plugin_calls.h: the runner's calls to installed plugins (core/workflows/step_calls.h).
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
  Dispatcher& dispatcher_;
  // Where `step` runs when not through the dispatcher; an error when it cannot be placed.
  // REQUIRES: launcher_ and !dispatched(step).
  Expected<LaunchTarget> place(const WorkflowStep& step) const;
  bool dispatched(const WorkflowStep& step) const;

  Launcher* launcher_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_PLUGIN_CALLS_H_

// core/workflows/step_calls.h: how the runner (core/workflows/runner.h) calls a step's plugin, behind an
// interface that tests replace.
//
// For every call of a step the runner first substitutes the step's args, then calls
// check() on its scheduling thread: a problem found there ends the step at once, without
// the call and without a retry. Otherwise it hands call() to a worker (core/workflows/run_env.h),
// which blocks until the plugin answers. core/workflows/plugin_calls.h is the implementation that
// reaches installed plugins.
//
// Thread-safety: check() is called on the scheduling thread only; call() on several
// workers at once, concurrently with check(). A call that ignores its cancellation is
// abandoned and may still run after the run ended: the StepCalls object, and the workflow
// its steps belong to, must then outlive it (the CLI exits without destroying them).
#ifndef PLUGBOARD_CORE_WORKFLOWS_STEP_CALLS_H_
#define PLUGBOARD_CORE_WORKFLOWS_STEP_CALLS_H_

#include <optional>
#include <string_view>

#include "core/routing/dispatcher.h"
#include "core/launch/outcome.h"
#include "core/workflows/workflow.h"

namespace plugboard::core {

struct StepCall {
  const WorkflowStep* step = nullptr;
  std::string_view workflow;  // the workflow's name
  Json args;                  // the step's args, references substituted
  Json parameters = Json::object();  // the step's parameters, references substituted
};

class StepCalls {
 public:
  virtual ~StepCalls() = default;

  // Before each call, cheaply (nothing is started or loaded): nullopt to go ahead, or the
  // outcome that ends the step instead, with phase kError (e.g. no deployer for it) or
  // kFailed (e.g. args its plugin's input schema rejects).
  virtual std::optional<Outcome> check(const WorkflowStep& step, const Json& args) = 0;

  // The call. `control` cancels it (a deadline, Ctrl-C); the result of a call that does
  // not return soon after is ignored.
  virtual Dispatch call(StepCall call, CallControl& control) = 0;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_STEP_CALLS_H_

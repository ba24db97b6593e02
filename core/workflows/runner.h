// core/workflows/runner.h: runs a workflow's step graph.
//
// Independent steps run concurrently, at most `parallel` plugin calls at a time;
// dependents start after all their dependencies succeeded; steps downstream of a failure
// are skipped with the reason. Per step: `Running` results are called again after the
// requeue delay (or the poll interval); each attempt has a deadline, after which the call
// is cancelled and the attempt fails saying so; failed attempts are retried as the step's
// retry policy says. cancel() stops the run: calls in flight are cancelled and steps not
// started are skipped. The states and transitions are core/workflows/step_machine.h's; the calls go
// through StepCalls (core/workflows/step_calls.h) and run on the workers of a RunEnv
// (core/workflows/run_env.h), which also keeps the time.
//
// A plugin call that ignores cancellation is abandoned when its deadline passes or the
// run ends: its result is ignored, RunReport::abandoned counts it, and it does not count
// against `parallel` (the environment gives the run another worker). It keeps running and
// using the StepCalls (and so the dispatcher), and the workflow, which must then outlive
// the process: the CLI exits without destroying them.
//
// Thread-safety: run() is called once, on one thread; the observer is called on that
// thread. cancel() may be called from any thread.
#ifndef PLUGBOARD_CORE_WORKFLOWS_RUNNER_H_
#define PLUGBOARD_CORE_WORKFLOWS_RUNNER_H_

#include <memory>

#include "core/base/defaults.h"
#include "core/base/duration.h"
#include "core/workflows/run_env.h"
#include "core/workflows/run_report.h"
#include "core/workflows/workflow.h"

namespace plugboard::core {

class StepCalls;

struct RunOptions {
  int parallel = defaults::kParallel;
  Millis default_timeout = defaults::kTimeout;
  Millis poll_interval = defaults::kPollInterval;
  Millis cancel_grace = defaults::kCancelGrace;  // how long cancelled calls may take to return
  std::size_t args_limit = defaults::kArgsLimit;  // bytes of a step's substituted args
};

class Runner {
 public:
  // `calls` must outlive the run (and its abandoned calls). `env` runs the calls and keeps
  // the time; null: a WorkerPoolEnv of `options.parallel` workers, owned by the runner.
  Runner(StepCalls& calls, RunOptions options, RunObserver* observer = nullptr,
         RunEnv* env = nullptr);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // REQUIRES: `workflow` passed loadWorkflow() and checkWorkflow(); `inputs` from
  // resolveInputs().
  RunReport run(const Workflow& workflow, const Json& inputs);
  void cancel();

 private:
  struct Events;
  StepCalls& calls_;
  RunOptions options_;
  RunObserver* observer_;
  std::unique_ptr<RunEnv> owned_env_;
  RunEnv& env_;
  std::shared_ptr<Events> events_;  // shared with the calls, which may outlive run()
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_RUNNER_H_

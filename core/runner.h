// core/runner.h: runs a workflow's step graph.
//
// Independent steps run concurrently, at most `parallel` plugin calls at a time;
// dependents start after all their dependencies succeeded; steps downstream of a failure
// are skipped with the reason. Per step: `Running` results are called again after the
// requeue delay (or the poll interval); each attempt has a deadline, after which the call
// is cancelled and the attempt fails saying so; failed attempts are retried as the step's
// retry policy says. cancel() stops the run: calls in flight are cancelled and steps not
// started are skipped.
//
// A plugin call that ignores cancellation is abandoned when its deadline passes or the
// run ends: its result is ignored and RunReport::abandoned counts it. Its thread still
// uses the dispatcher, which must then outlive the process (the CLI exits without
// destroying it).
//
// Thread-safety: run() is called once, on one thread; the observer is called on that
// thread. cancel() may be called from any thread.
#ifndef PLUGBOARD_CORE_RUNNER_H_
#define PLUGBOARD_CORE_RUNNER_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/defaults.h"
#include "core/dispatcher.h"
#include "core/duration.h"
#include "core/launcher.h"
#include "core/workflow.h"

namespace plugboard::core {

using Json = nlohmann::json;

enum class StepPhase { kPending, kRunning, kSucceeded, kFailed, kError, kSkipped, kCancelled };
std::string_view stepPhaseName(StepPhase phase);
bool isTerminal(StepPhase phase);

struct StepStatus {
  std::string id;
  StepPhase phase = StepPhase::kPending;
  std::string message;
  Json outputs = Json::object();
  int attempts = 0;    // attempts started
  int calls = 0;       // plugin calls made, requeues included
  std::string plugin;  // name@version that answered the last call
  std::optional<std::chrono::steady_clock::time_point> started, finished;

  Millis elapsed(
      std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now()) const;
  Json toJson() const;
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // After every change of a step's phase or message.
  virtual void stepChanged(const StepStatus& step) = 0;
  // At least every 250 ms while the run goes on, for displays of elapsed time.
  virtual void tick() {}
};

struct RunOptions {
  int parallel = defaults::kParallel;
  Millis default_timeout = defaults::kTimeout;
  Millis poll_interval = defaults::kPollInterval;
  Millis cancel_grace = defaults::kCancelGrace;  // how long cancelled calls may take to return
  // Places and starts the plugins of steps with a deployer of their own, or known only
  // to the registry (core/launcher.h); null: every step goes through the dispatcher. Must
  // outlive the run, like the dispatcher.
  Launcher* launcher = nullptr;
};

struct RunReport {
  std::string workflow;
  std::vector<StepStatus> steps;  // in file order
  bool cancelled = false;
  int abandoned = 0;
  Millis duration{0};

  bool succeeded() const;
  Json toJson() const;
};

class Runner {
 public:
  Runner(Dispatcher& dispatcher, RunOptions options, RunObserver* observer = nullptr);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // REQUIRES: `workflow` passed loadWorkflow() and checkWorkflow(); `inputs` from
  // resolveInputs().
  RunReport run(const Workflow& workflow, const Json& inputs);
  void cancel();

 private:
  struct Shared;
  Dispatcher& dispatcher_;
  RunOptions options_;
  RunObserver* observer_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_RUNNER_H_

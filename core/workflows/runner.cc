#include "core/workflows/runner.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "core/workflows/step_calls.h"
#include "core/workflows/step_machine.h"

namespace plugboard::core {

// What the calls and cancel() tell the scheduling thread.
struct Runner::Events {
  struct Completion {
    std::size_t step;
    std::uint64_t token;
    Dispatch dispatch;
  };
  std::mutex mu;
  std::vector<Completion> done;
  bool cancel_requested = false;

  // Moves the completions into `out`; true when a cancel was requested.
  bool take(std::vector<Completion>& out) {
    std::lock_guard lock(mu);
    out.swap(done);
    return cancel_requested;
  }
};

Runner::Runner(StepCalls& calls, RunOptions options, RunObserver* observer, RunEnv* env)
    : calls_(calls),
      options_(options),
      observer_(observer),
      owned_env_(env != nullptr ? nullptr
                                : std::make_unique<WorkerPoolEnv>(std::max(1, options.parallel))),
      env_(env != nullptr ? *env : *owned_env_),
      events_(std::make_shared<Events>()) {
  options_.parallel = std::max(1, options_.parallel);
}

Runner::~Runner() = default;

void Runner::cancel() {
  {
    std::lock_guard lock(events_->mu);
    events_->cancel_requested = true;
  }
  env_.wake();
}

RunReport Runner::run(const Workflow& wf, const Json& inputs) {
  const RunEnv::TimePoint run_start = env_.now();
  StepMachine machine(wf, inputs, options_, calls_, observer_);
  std::optional<RunEnv::TimePoint> grace_end;
  std::vector<Events::Completion> completions;

  auto handleEvents = [&](RunEnv::TimePoint now) {
    const bool cancel_requested = events_->take(completions);
    for (auto& c : completions) machine.callReturned(c.step, c.token, std::move(c.dispatch), now);
    completions.clear();
    return cancel_requested;
  };

  for (;;) {
    RunEnv::TimePoint now = env_.now();
    if (handleEvents(now) && !machine.cancelling()) {
      machine.cancel(now);
      grace_end = now + options_.cancel_grace;
    }
    for (int abandoned = machine.timersDue(now); abandoned > 0; --abandoned) env_.abandon();
    while (auto call = machine.startNext(now)) {
      env_.execute([events = events_, &calls = calls_, c = std::move(*call)]() mutable {
        Dispatch d = calls.call(std::move(c.call), *c.control);
        std::lock_guard lock(events->mu);
        events->done.push_back({c.step, c.token, std::move(d)});
      });
    }

    if (machine.allEnded() && machine.inFlight() == 0) {
      if (machine.unanswered() <= 0) break;
      if (!grace_end) grace_end = now + options_.cancel_grace;  // for calls given up on
    }
    if (grace_end && now >= *grace_end) break;

    // Sleep until a call returns, a cancel, or a timer is due.
    RunEnv::TimePoint wake = RunEnv::TimePoint::max();
    if (observer_ != nullptr) {
      observer_->tick();
      wake = now + std::chrono::milliseconds(250);
    }
    if (auto timer = machine.nextTimer()) wake = std::min(wake, *timer);
    if (grace_end) wake = std::min(wake, *grace_end);
    env_.waitUntil(wake);
  }

  handleEvents(env_.now());  // calls that returned at the last moment are not abandoned
  RunReport report;
  report.workflow = wf.name;
  report.cancelled = machine.cancelling();
  report.abandoned = machine.inFlight() + machine.unanswered();
  report.steps = machine.takeStatuses();
  report.duration = std::chrono::duration_cast<Millis>(env_.now() - run_start);
  return report;
}

}  // namespace plugboard::core

// core/workflows/step_machine.h: the steps of one run, their states and the transitions between
// them, for core/workflows/runner.h; it decides, the runner makes the calls and keeps the time.
//
// A step is Pending until its dependencies succeeded, then joins the ready queue (started
// in file order among the ready ones). Starting an attempt substitutes its args and asks
// StepCalls::check(); the call itself is returned to the runner, which hands it to a worker
// and reports its result through callReturned(). A call that asks to be called again, or
// a failed attempt that the retry policy allows again, waits on a timer; so does each
// attempt's deadline. When a step ends other than Succeeded, its dependents are skipped
// with the reason, transitively. Every change of phase or message goes to the observer.
// Each event costs the same whatever the number of steps (queues, a timer heap, per-step
// dependents lists; only cancel() visits every step).
//
// Thread-safety: none; the runner's scheduling thread only.
#ifndef PLUGBOARD_CORE_WORKFLOWS_STEP_MACHINE_H_
#define PLUGBOARD_CORE_WORKFLOWS_STEP_MACHINE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <span>
#include <vector>

#include "core/workflows/runner.h"
#include "core/workflows/step_calls.h"
#include "core/workflows/substitution.h"

namespace plugboard::core {

class StepMachine {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // A call to make; its result goes back through callReturned(step, token, ...).
  struct Call {
    std::size_t step = 0;
    std::uint64_t token = 0;
    std::shared_ptr<CallControl> control;
    StepCall call;
  };

  // `workflow` must outlive the machine; `calls` does the pre-call checks.
  StepMachine(const Workflow& workflow, const Json& inputs, const RunOptions& options,
              StepCalls& calls, RunObserver* observer);
  ~StepMachine();
  StepMachine(const StepMachine&) = delete;
  StepMachine& operator=(const StepMachine&) = delete;

  // Transitions, each at time `now`.
  // The next call to make: a requeue or retry that is due, else the first ready step;
  // nullopt when none, when `parallel` calls are in flight, or when cancelling. Steps whose
  // args or check() fail end on the way.
  std::optional<Call> startNext(TimePoint now);
  // The result of a call startNext() returned (or of one given up on, which is ignored).
  void callReturned(std::size_t step, std::uint64_t token, Dispatch dispatch, TimePoint now);
  // Fires the timers due by `now`: deadlines passed and calls due again. Returns how many
  // calls in flight were cancelled at their deadline and given up on.
  int timersDue(TimePoint now);
  // Ctrl-C: cancels the calls in flight, ends every step that has not ended.
  void cancel(TimePoint now);

  // State.
  std::optional<TimePoint> nextTimer() const;
  bool allEnded() const;
  int inFlight() const { return in_flight_; }     // calls whose result still counts
  int unanswered() const { return unanswered_; }  // calls given up on, not returned yet
  bool cancelling() const { return cancelling_; }
  // The statuses in file order, moved out (the machine is spent).
  std::vector<StepStatus> takeStatuses();

 private:
  struct Step;
  struct Timer {
    TimePoint when;
    std::uint32_t step;
    bool deadline;  // else a call due again
    bool operator>(const Timer& o) const { return when > o.when; }
  };
  using IndexQueue = std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>>;
  // A list of step indexes per step, stored end to end: no allocation per step.
  struct IndexLists {
    std::vector<std::uint32_t> begin;  // one per step, and the end
    std::vector<std::uint32_t> items;
    std::span<const std::uint32_t> of(std::size_t i) const {
      return {items.data() + begin[i], items.data() + begin[i + 1]};
    }
  };

  std::optional<Call> startAttempt(std::size_t i, TimePoint now);
  std::optional<Call> callAgain(std::size_t i, TimePoint now);
  std::optional<Call> makeCall(std::size_t i, TimePoint now, bool new_attempt);
  void succeeded(std::size_t i, Outcome& outcome, TimePoint now);
  void running(std::size_t i, const Outcome& outcome, TimePoint now);
  void attemptFailed(std::size_t i, StepPhase phase, const std::string& message, TimePoint now);
  int deadlinePassed(std::size_t i, TimePoint now);
  void end(std::size_t i, StepPhase phase, std::string message, TimePoint now);
  void skipDependents(std::size_t i, TimePoint now);
  void callAt(std::size_t i, TimePoint when, bool retry);
  bool timerLive(const Timer& t) const;
  void addTimer(TimePoint when, std::size_t i, bool deadline);
  void notify(std::size_t i);

  const Workflow& workflow_;
  RunOptions options_;
  StepCalls& calls_;
  RunObserver* observer_;
  std::vector<Step> steps_;
  std::vector<StepStatus> statuses_;  // same index as steps_; moved out at the end
  IndexLists dependents_;             // the steps that depend on each step
  IndexLists reads_;                  // the steps whose outputs each step's args use
  SubstitutionContext context_;
  IndexQueue ready_;           // Pending steps whose dependencies all succeeded
  IndexQueue due_;             // Running steps whose next call is due
  std::vector<Timer> timers_;  // a min-heap by time
  std::size_t running_ = 0;    // steps in phase Running
  std::size_t ended_ = 0;
  int in_flight_ = 0;
  int unanswered_ = 0;
  bool cancelling_ = false;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_STEP_MACHINE_H_

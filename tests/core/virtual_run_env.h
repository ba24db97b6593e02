// tests/core/virtual_run_env.h: a RunEnv (core/workflows/run_env.h) on a virtual clock, for
// runner tests that take milliseconds whatever the durations they play out.
//
// Calls run each on a thread of its own (or, inline, within execute()). A call may sleep
// in virtual time (sleep()), optionally waking early when its CallControl is cancelled.
// The clock moves only when the runner waits and every call is asleep or done: it jumps
// to the first of the runner's deadline, the sleepers' wake-up times and the actions set
// with at(). So a run plays out the same way every time, and a test can check the exact
// virtual times of what happened. Waiting with nothing that could ever happen aborts.
//
// Thread-safety: all members may be called from any thread; waitUntil(), execute() and
// abandon() come from the runner's scheduling thread.
#ifndef PLUGBOARD_TESTS_CORE_VIRTUAL_RUN_ENV_H_
#define PLUGBOARD_TESTS_CORE_VIRTUAL_RUN_ENV_H_

#include <condition_variable>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "core/routing/dispatcher.h"
#include "core/workflows/run_env.h"

namespace plugboard::testing {

class VirtualRunEnv final : public core::RunEnv {
 public:
  // `threads` false: calls run inline and must not sleep.
  explicit VirtualRunEnv(bool threads = true);
  ~VirtualRunEnv() override;  // shutdown()

  TimePoint now() override;
  void execute(std::function<void()> call) override;
  void abandon() override;
  void wake() override;
  void waitUntil(TimePoint until) override;

  // Inside a call: sleeps `d` of virtual time, or until `cancel` (if not null) is
  // cancelled. True when woken by the cancellation.
  bool sleep(std::chrono::milliseconds d, const core::CallControl* cancel);
  // Runs `action` on the runner's thread, in waitUntil(), when the clock reaches `when`.
  void at(TimePoint when, std::function<void()> action);
  // The clock's reading when the environment was made.
  TimePoint start() const { return start_; }
  int abandoned();
  // Wakes every sleeping call (it returns as if its time had come) and joins the calls'
  // threads. Call it before destroying what the calls use.
  void shutdown();

 private:
  struct Sleeper {
    TimePoint due;
    const core::CallControl* cancel;
    bool awake = false;
  };
  void wakeUp(std::list<Sleeper*>::iterator it);  // REQUIRES: mu_ held

  const bool threads_;
  const TimePoint start_;
  std::mutex mu_;
  std::condition_variable cv_;
  TimePoint now_;
  int active_ = 0;  // calls running and not asleep
  int abandoned_ = 0;
  bool signalled_ = false;
  bool shutdown_ = false;
  std::list<Sleeper*> sleepers_;
  std::multimap<TimePoint, std::function<void()>> actions_;
  std::vector<std::thread> calls_;
};

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_CORE_VIRTUAL_RUN_ENV_H_

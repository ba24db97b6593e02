// core/launch/start_control.h: cancels a plugin's start while it is under way.
//
// A step's call may have to start its plugin first (Launcher::start: a container, a
// sidecar that must open its port). Its CallControl holds a StartControl, so that the
// step's deadline or Ctrl-C stops the start too: the deployer module attaches its cancel
// while its start runs, and cancel() calls it.
//
// A StartDeadline cancels one at a time bound (a start made before the run, which no
// step's deadline covers yet): a timer on the AlarmClock its caller owns
// (core/base/clock.h; for the commands, core/runtime's Runtime::clock()), so that no
// thread waits for it and tests may run it on virtual time.
//
// Thread-safety: every member may be called from any thread.
#ifndef PLUGBOARD_CORE_LAUNCH_START_CONTROL_H_
#define PLUGBOARD_CORE_LAUNCH_START_CONTROL_H_

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>

#include "core/base/clock.h"
#include "core/base/duration.h"

namespace plugboard::core {

class StartControl {
 public:
  // Cancels the start attached now, if any, and every later one at once. Idempotent.
  void cancel();
  bool cancelled() const;

  // Makes cancel() call `canceller` until release(); calls it at once when already
  // cancelled. release() waits for a cancel() that is calling it. One at a time.
  void attach(std::function<void()> canceller);
  void release();

 private:
  mutable std::mutex mu_;
  bool cancelled_ = false;
  std::function<void()> canceller_;  // guarded by mu_
};

// Cancels `control` once `timeout` has passed on `clock`, unless destroyed before: a timer
// on `clock` calls control.cancel() (on the clock's timer thread; a deployer's cancel_start
// only asks the start to stop, so it is quick). The destructor cancels the timer, or, when
// it has begun to fire, waits until it has. REQUIRES: `clock` and `control` outlive it.
class StartDeadline {
 public:
  StartDeadline(AlarmClock& clock, StartControl& control, Millis timeout);
  ~StartDeadline();
  StartDeadline(const StartDeadline&) = delete;
  StartDeadline& operator=(const StartDeadline&) = delete;

 private:
  // Shared with the timer, which may fire while the destructor runs.
  struct Fired {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;  // guarded by mu: the timer has called cancel()
  };
  AlarmClock& clock_;
  const std::shared_ptr<Fired> fired_ = std::make_shared<Fired>();
  AlarmClock::TimerId timer_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_LAUNCH_START_CONTROL_H_

// core/launch/start_control.h: cancels a plugin's start while it is under way.
//
// A step's call may have to start its plugin first (Launcher::start: a container, a
// sidecar that must open its port). Its CallControl holds a StartControl, so that the
// step's deadline or Ctrl-C stops the start too: the deployer module attaches its cancel
// while its start runs, and cancel() calls it.
//
// A StartDeadline cancels one at a time bound (a start made before the run, which no
// step's deadline covers yet).
//
// Thread-safety: every member may be called from any thread.
#ifndef PLUGBOARD_CORE_LAUNCH_START_CONTROL_H_
#define PLUGBOARD_CORE_LAUNCH_START_CONTROL_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

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

// Cancels `control` once `timeout` has passed, unless destroyed before: a thread of its own
// waits for it, and the destructor wakes and joins it.
class StartDeadline {
 public:
  StartDeadline(StartControl& control, Millis timeout);
  ~StartDeadline();
  StartDeadline(const StartDeadline&) = delete;
  StartDeadline& operator=(const StartDeadline&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;  // guarded by mu_
  std::thread waiter_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_LAUNCH_START_CONTROL_H_

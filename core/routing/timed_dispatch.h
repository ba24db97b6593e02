// core/routing/timed_dispatch.h: one dispatch with a deadline, for callers without a runner
// (`plugboard exec`, the HTTP server).
//
// The dispatch runs on a thread of its own. At the deadline the call is cancelled and the
// result is a Failed outcome saying the deadline passed. A plugin that ignores the
// cancellation for longer than `grace` is abandoned: its thread keeps using the
// dispatcher, which must then outlive the process. Thread-safe.
#ifndef PLUGBOARD_CORE_ROUTING_TIMED_DISPATCH_H_
#define PLUGBOARD_CORE_ROUTING_TIMED_DISPATCH_H_

#include <functional>
#include <memory>

#include "core/base/defaults.h"
#include "core/routing/dispatcher.h"
#include "core/base/duration.h"

namespace plugboard::core {

struct TimedDispatch {
  Dispatch dispatch;
  bool deadline_passed = false;
  bool abandoned = false;
};

TimedDispatch dispatchWithDeadline(Dispatcher& dispatcher, DispatchRequest request, Millis timeout,
                                   Millis grace = defaults::kCancelGrace);

// Deadlines for calls that run on the caller's own thread, kept by one watcher thread:
// cheaper per call than a thread each, for servers. When a call's deadline passes its
// CallControl is cancelled; a cooperative plugin then returns at once. A plugin that
// ignores the cancellation keeps its caller's thread until it returns.
// Thread-safety: all members may be called from any thread.
class DeadlineWatch {
 public:
  DeadlineWatch();
  ~DeadlineWatch();
  DeadlineWatch(const DeadlineWatch&) = delete;
  DeadlineWatch& operator=(const DeadlineWatch&) = delete;

  // Runs `request` on this thread with a deadline `timeout` from now. When the deadline
  // passed, the result is Failed and says so, whatever the plugin answered.
  //
  // `on_slow`, when given, runs once on the watcher thread if the call is still running
  // `slow_after` from now (give or take one `slow_after`); it must be quick and must not
  // call back into this watch. It never runs after dispatch() has returned.
  Dispatch dispatch(Dispatcher& dispatcher, const DispatchRequest& request, Millis timeout,
                    std::function<void()> on_slow = {}, Millis slow_after = defaults::kSlowCall);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_ROUTING_TIMED_DISPATCH_H_

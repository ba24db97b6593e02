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

// What a DeadlineWatch tells the caller while its call runs, on the watcher's thread.
// Each notice runs once at most (give or take one `slow_after` late) and never after
// dispatch() has returned; each must be quick and must not call back into this watch.
struct CallNotices {
  std::function<void()> slow;  // the call has run for `slow_after`
  Millis slow_after = defaults::kSlowCall;
  std::function<void()> late;  // the call has run for `late_after`
  Millis late_after{0};
};

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
  // passed, the result is Failed and says so, whatever the plugin answered. With `route`
  // (resolved by `dispatcher` for this request), the call goes there without resolving again.
  Dispatch dispatch(Dispatcher& dispatcher, const DispatchRequest& request, Millis timeout,
                    CallNotices notices = {}, const Route* route = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_ROUTING_TIMED_DISPATCH_H_

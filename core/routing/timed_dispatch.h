// core/routing/timed_dispatch.h: dispatches with a deadline, run on a WorkPool
// (core/base/work_pool.h) with the deadline a timer on its AlarmClock (core/base/clock.h).
//
// At the deadline the call's CallControl is cancelled; a cooperative plugin then returns at
// once, and the result is a Failed outcome saying the deadline passed, with the outputs and
// message the plugin answered (what it did when asked to stop). A plugin that ignores the cancellation for `grace` more is abandoned: the pool
// puts another thread in its place, and the call's thread keeps using the dispatcher until
// it returns.
#ifndef PLUGBOARD_CORE_ROUTING_TIMED_DISPATCH_H_
#define PLUGBOARD_CORE_ROUTING_TIMED_DISPATCH_H_

#include <functional>
#include <memory>
#include <optional>

#include "core/base/clock.h"
#include "core/base/defaults.h"
#include "core/base/duration.h"
#include "core/base/work_pool.h"
#include "core/routing/dispatcher.h"

namespace plugboard::core {

struct TimedDispatch {
  Dispatch dispatch;
  bool deadline_passed = false;
  bool abandoned = false;
};

// For `plugboard exec`: runs the call on `pool`, waits for it on this thread, and returns
// at the deadline plus `grace` at the latest (abandoned: the dispatcher must then outlive
// the process). The second form makes a pool of one thread, on the steady clock.
TimedDispatch dispatchWithDeadline(WorkPool& pool, AlarmClock& clock, Dispatcher& dispatcher,
                                   DispatchRequest request, Millis timeout,
                                   Millis grace = defaults::kCancelGrace);
TimedDispatch dispatchWithDeadline(Dispatcher& dispatcher, DispatchRequest request, Millis timeout,
                                   Millis grace = defaults::kCancelGrace);

// For servers: each call runs on the pool, and its result is handed to `done`, on the
// pool's thread, when it returns. A call past its deadline and `grace` is abandoned to the
// pool (it no longer counts against its bound) and still handed to `done` if it returns.
// A call given a start-by time that is still waiting for a thread then is not made: `done`
// gets, on the clock's thread, an Error with `not_started` set, and the task does nothing
// when its turn comes. So a caller never takes a call that has not started for one running.
// Thread-safety: dispatch() may be called from any thread. REQUIRES: `pool` and `clock`
// outlive the object and every call it started.
class TimedCalls {
 public:
  using Done = std::function<void(Dispatch)>;
  TimedCalls(WorkPool& pool, AlarmClock& clock, Millis grace = defaults::kCancelGrace)
      : pool_(pool), clock_(clock), grace_(grace) {}

  // Runs `request` on `dispatcher` (held until it returns) with a deadline `timeout` from
  // now. With `route` (resolved by `dispatcher` for this request), the call goes there
  // without resolving again. With `start_by`, the call is made only if a thread takes it
  // before then (REQUIRES: start_by is before the deadline plus `grace`).
  void dispatch(std::shared_ptr<Dispatcher> dispatcher, DispatchRequest request, Millis timeout,
                Done done, std::optional<Route> route = std::nullopt,
                std::optional<Clock::TimePoint> start_by = std::nullopt);

 private:
  WorkPool& pool_;
  AlarmClock& clock_;
  const Millis grace_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_ROUTING_TIMED_DISPATCH_H_

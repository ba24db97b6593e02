// core/timed_dispatch.h: one dispatch with a deadline, for callers without a runner
// (`plugboard exec`, the HTTP server).
//
// The dispatch runs on a thread of its own. At the deadline the call is cancelled and the
// result is a Failed outcome saying the deadline passed. A plugin that ignores the
// cancellation for longer than `grace` is abandoned: its thread keeps using the
// dispatcher, which must then outlive the process. Thread-safe.
#ifndef PLUGBOARD_CORE_TIMED_DISPATCH_H_
#define PLUGBOARD_CORE_TIMED_DISPATCH_H_

#include <memory>

#include "core/dispatcher.h"
#include "core/duration.h"

namespace plugboard::core {

struct TimedDispatch {
  Dispatch dispatch;
  bool deadline_passed = false;
  bool abandoned = false;
};

TimedDispatch dispatchWithDeadline(Dispatcher& dispatcher, DispatchRequest request,
                                   Millis timeout, Millis grace = Millis(2000));
// The same, keeping `dispatcher` alive until the call returns, even if it is abandoned.
TimedDispatch dispatchWithDeadline(std::shared_ptr<Dispatcher> dispatcher, DispatchRequest request,
                                   Millis timeout, Millis grace = Millis(2000));

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_TIMED_DISPATCH_H_

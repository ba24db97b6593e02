#include "core/timed_dispatch.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace plugboard::core {

TimedDispatch dispatchWithDeadline(Dispatcher& dispatcher, DispatchRequest request,
                                   Millis timeout, Millis grace) {
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<Dispatch> result;
    CallControl control;
  };
  auto state = std::make_shared<State>();
  std::thread([state, &dispatcher, request = std::move(request)] {
    Dispatch d = dispatcher.dispatch(request, state->control);
    std::lock_guard lock(state->mu);
    state->result = std::move(d);
    state->cv.notify_all();
  }).detach();

  TimedDispatch out;
  std::unique_lock lock(state->mu);
  if (state->cv.wait_for(lock, timeout, [&] { return state->result.has_value(); })) {
    out.dispatch = std::move(*state->result);
    return out;
  }
  out.deadline_passed = true;
  lock.unlock();
  state->control.cancel();
  lock.lock();
  out.abandoned = !state->cv.wait_for(lock, grace, [&] { return state->result.has_value(); });
  if (!out.abandoned) out.dispatch = std::move(*state->result);
  out.dispatch.outcome = {Phase::kFailed,
                          "deadline of " + formatElapsed(timeout) + " passed; the call was cancelled" +
                              (out.abandoned ? " but did not stop, and was abandoned" : ""),
                          Json::object(),
                          {}};
  return out;
}

}  // namespace plugboard::core

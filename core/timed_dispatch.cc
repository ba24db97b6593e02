#include "core/timed_dispatch.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace plugboard::core {

namespace {

Dispatcher& deref(Dispatcher* d) { return *d; }
Dispatcher& deref(const std::shared_ptr<Dispatcher>& d) { return *d; }

// `dispatcher` is a raw reference or a shared_ptr; the thread keeps a copy of it.
template <class D>
TimedDispatch timed(D dispatcher, DispatchRequest request, Millis timeout, Millis grace) {
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<Dispatch> result;
    CallControl control;
  };
  auto state = std::make_shared<State>();
  std::thread([state, dispatcher, request = std::move(request)]() mutable {
    Dispatch d = deref(dispatcher).dispatch(request, state->control);
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

}  // namespace

TimedDispatch dispatchWithDeadline(Dispatcher& dispatcher, DispatchRequest request, Millis timeout,
                                   Millis grace) {
  return timed(&dispatcher, std::move(request), timeout, grace);
}

TimedDispatch dispatchWithDeadline(std::shared_ptr<Dispatcher> dispatcher, DispatchRequest request,
                                   Millis timeout, Millis grace) {
  return timed(std::move(dispatcher), std::move(request), timeout, grace);
}

}  // namespace plugboard::core

#include "core/timed_dispatch.h"

#include <condition_variable>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace plugboard::core {

TimedDispatch dispatchWithDeadline(Dispatcher& dispatcher, DispatchRequest request, Millis timeout,
                                   Millis grace) {
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

struct DeadlineWatch::Impl {
  struct Watched {
    std::chrono::steady_clock::time_point deadline;
    CallControl* control;
    bool fired = false;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::list<Watched> calls;  // stable addresses; few entries (one per call in flight)
  bool stop = false;
  std::chrono::steady_clock::time_point next_wake = std::chrono::steady_clock::time_point::max();
  std::thread thread;

  void run() {
    std::unique_lock lock(mu);
    while (!stop) {
      auto next = std::chrono::steady_clock::time_point::max();
      const auto now = std::chrono::steady_clock::now();
      for (auto& w : calls) {
        if (w.fired) continue;
        if (w.deadline <= now) {
          w.fired = true;
          w.control->cancel();
        } else {
          next = std::min(next, w.deadline);
        }
      }
      next_wake = next;
      if (next == std::chrono::steady_clock::time_point::max()) {
        cv.wait(lock);
      } else {
        cv.wait_until(lock, next);
      }
    }
  }
};

DeadlineWatch::DeadlineWatch() : impl_(std::make_unique<Impl>()) {
  impl_->thread = std::thread([this] { impl_->run(); });
}

DeadlineWatch::~DeadlineWatch() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  impl_->thread.join();
}

Dispatch DeadlineWatch::dispatch(Dispatcher& dispatcher, const DispatchRequest& request, Millis timeout) {
  CallControl control;
  std::list<Impl::Watched>::iterator it;
  bool earlier;
  {
    std::lock_guard lock(impl_->mu);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    it = impl_->calls.insert(impl_->calls.end(), {deadline, &control, false});
    earlier = deadline < impl_->next_wake;
    if (earlier) impl_->next_wake = deadline;
  }
  if (earlier) impl_->cv.notify_all();  // the watcher sleeps past this deadline
  Dispatch d = dispatcher.dispatch(request, control);
  bool fired;
  {
    std::lock_guard lock(impl_->mu);
    fired = it->fired;
    impl_->calls.erase(it);
  }
  if (fired) {
    d.outcome = {Phase::kFailed, "deadline of " + formatElapsed(timeout) + " passed; the call was cancelled",
                 Json::object(), {}};
  }
  return d;
}

}  // namespace plugboard::core

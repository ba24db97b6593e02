#include "core/routing/timed_dispatch.h"

#include <algorithm>
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
  using Clock = std::chrono::steady_clock;
  struct Watched {
    Clock::time_point deadline;
    CallControl* control;
    bool fired = false;
    Clock::time_point slow_at, late_at;  // Clock::time_point::max() when nobody asked
    CallNotices* notices;
  };
  // While calls come and go, the watcher looks at them every `tick` (the shortest slow_after
  // asked for) instead of being woken for each new call: a wake-up per call would cost more
  // than the call. After a second without calls it sleeps until the next one.
  static constexpr auto kIdleAfter = std::chrono::seconds(1);

  std::mutex mu;
  std::condition_variable cv;
  std::list<Watched> calls;  // stable addresses; few entries (one per call in flight)
  bool stop = false;
  Clock::time_point next_wake = Clock::time_point::max();
  Clock::time_point last_call{};
  Clock::duration tick = Clock::duration::max();
  std::thread thread;

  void run() {
    std::unique_lock lock(mu);
    while (!stop) {
      auto next = Clock::time_point::max();
      const auto now = Clock::now();
      for (auto& w : calls) {
        if (w.slow_at <= now) {
          w.slow_at = Clock::time_point::max();
          w.notices->slow();
        }
        if (w.late_at <= now) {
          w.late_at = Clock::time_point::max();
          w.notices->late();
        }
        next = std::min({next, w.slow_at, w.late_at});
        if (w.fired) continue;
        if (w.deadline <= now) {
          w.fired = true;
          w.control->cancel();
        } else {
          next = std::min(next, w.deadline);
        }
      }
      if (tick != Clock::duration::max() && now - last_call < kIdleAfter) next = std::min(next, now + tick);
      next_wake = next;
      if (next == Clock::time_point::max()) {
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

Dispatch DeadlineWatch::dispatch(Dispatcher& dispatcher, const DispatchRequest& request,
                                 Millis timeout, CallNotices notices, const Route* route) {
  using Clock = Impl::Clock;
  CallControl control;
  std::list<Impl::Watched>::iterator it;
  bool earlier;
  {
    std::lock_guard lock(impl_->mu);
    const auto now = Clock::now();
    const auto deadline = now + timeout;
    const auto never = Clock::time_point::max();
    const auto slow_at = notices.slow ? now + notices.slow_after : never;
    const auto late_at = notices.late ? now + notices.late_after : never;
    if (notices.slow) impl_->tick = std::min<Clock::duration>(impl_->tick, notices.slow_after);
    impl_->last_call = now;
    it = impl_->calls.insert(impl_->calls.end(),
                             {deadline, &control, false, slow_at, late_at, &notices});
    const auto wake = std::min({deadline, slow_at, late_at});
    earlier = wake < impl_->next_wake;
    if (earlier) impl_->next_wake = wake;
  }
  if (earlier) impl_->cv.notify_all();  // the watcher sleeps past this deadline
  Dispatch d = route != nullptr ? dispatcher.call(*route, request, control)
                                : dispatcher.dispatch(request, control);
  bool fired;
  {
    std::lock_guard lock(impl_->mu);
    fired = it->fired;
    impl_->calls.erase(it);
  }
  if (fired) {
    d.deadline_passed = true;
    d.outcome = {Phase::kFailed, "deadline of " + formatElapsed(timeout) + " passed; the call was cancelled",
                 Json::object(), {}};
  }
  return d;
}

}  // namespace plugboard::core

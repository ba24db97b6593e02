#include "core/routing/timed_dispatch.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>

namespace plugboard::core {
namespace {

Outcome deadlinePassed(Millis timeout, bool abandoned) {
  return {Phase::kFailed,
          "deadline of " + formatElapsed(timeout) + " passed; the call was cancelled" +
              (abandoned ? " but did not stop, and was abandoned" : ""),
          Json::object(),
          {}};
}

// A call that answered its cancellation: Failed for the deadline, with the plugin's own
// answer kept (its outputs, such as an Arcaflow plugin's "cancelled" output, and its
// message), as Arcaflow's engine completes a cancelled step with what the plugin answered.
// A call cancelled before it reached a plugin has no answer of the plugin's to keep.
Outcome answeredAfterDeadline(Millis timeout, Dispatch& d) {
  Outcome o = deadlinePassed(timeout, false);
  if (!d.reached) return o;
  if (!d.outcome.message.empty()) o.message += "; it answered: " + d.outcome.message;
  o.outputs = std::move(d.outcome.outputs);
  return o;
}

}  // namespace

TimedDispatch dispatchWithDeadline(WorkPool& pool, AlarmClock& clock, Dispatcher& dispatcher,
                                   DispatchRequest request, Millis timeout, Millis grace) {
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<Dispatch> result;
    bool deadline_passed = false, abandoned = false;
    CallControl control;
  };
  auto state = std::make_shared<State>();
  pool.post([state, &dispatcher, request = std::move(request)] {
    Dispatch d = dispatcher.dispatch(request, state->control);
    std::lock_guard lock(state->mu);
    state->result = std::move(d);
    state->cv.notify_all();
  });
  const auto deadline = clock.after(timeout, [state, &clock, grace] {
    {
      std::lock_guard lock(state->mu);
      if (state->result) return;
      state->deadline_passed = true;
    }
    state->control.cancel();
    clock.after(grace, [state] {  // touches only `state`: harmless once the caller left
      std::lock_guard lock(state->mu);
      if (state->result) return;
      state->abandoned = true;
      state->cv.notify_all();
    });
  });
  std::unique_lock lock(state->mu);
  state->cv.wait(lock, [&] { return state->result.has_value() || state->abandoned; });
  TimedDispatch out;
  out.deadline_passed = state->deadline_passed;
  out.abandoned = state->abandoned;
  if (state->result) out.dispatch = std::move(*state->result);
  lock.unlock();
  clock.cancel(deadline);
  if (out.abandoned) pool.abandon();
  if (out.deadline_passed) {
    out.dispatch.outcome = out.abandoned
                               ? deadlinePassed(timeout, true)
                               : answeredAfterDeadline(timeout, out.dispatch);
  }
  return out;
}

TimedDispatch dispatchWithDeadline(Dispatcher& dispatcher, DispatchRequest request, Millis timeout,
                                   Millis grace) {
  WorkPool pool(1);
  return dispatchWithDeadline(pool, pool.clock(), dispatcher, std::move(request), timeout, grace);
}

void TimedCalls::dispatch(std::shared_ptr<Dispatcher> dispatcher, DispatchRequest request,
                          Millis timeout, Done done, std::optional<Route> route,
                          std::optional<Clock::TimePoint> start_by) {
  struct Call {
    std::shared_ptr<Dispatcher> dispatcher;
    DispatchRequest request;
    Done done;
    std::optional<Route> route;
    CallControl control;
    AlarmClock::TimerId timer = 0;
    AlarmClock::TimerId start_timer = 0;
    std::atomic<int> state{0};  // 0 running, 1 returned, 2 past the deadline, 3 returned late
    std::atomic<int> start{0};  // 0 waiting for a thread, 1 taken by one, 2 not made
  };
  auto call = std::make_shared<Call>();
  call->dispatcher = std::move(dispatcher);
  call->request = std::move(request);
  call->done = std::move(done);
  call->route = std::move(route);
  WorkPool* pool = &pool_;
  AlarmClock* clock = &clock_;
  const Millis grace = grace_;
  // The timer runs before the task can cancel it: the task starts only after it is set.
  call->timer = clock_.after(timeout, [call, pool, clock, grace] {
    int running = 0;
    if (!call->state.compare_exchange_strong(running, 2)) return;
    call->control.cancel();
    clock->after(grace, [call, pool] {
      if (call->state.load() != 3) pool->abandon();  // still running: not waited for
    });
  });
  if (start_by) {
    // Set before the task is posted, so that the task finds it to cancel.
    call->start_timer = clock_.at(*start_by, [call, clock] {
      int waiting = 0;
      if (!call->start.compare_exchange_strong(waiting, 2)) return;  // a thread took it
      // Its deadline's timers find it returned: nothing to cancel, nothing to abandon.
      int running = 0;
      if (call->state.compare_exchange_strong(running, 1)) {
        clock->cancel(call->timer);
      } else {
        call->state = 3;
      }
      Dispatch d;
      d.not_started = true;
      d.outcome = Outcome::error(
          "the call waited for a free thread of the call pool until its start-by time and was "
          "not made; try again later");
      call->dispatcher.reset();
      call->done(std::move(d));
    });
  }
  pool_.post([call, clock, timeout] {
    int waiting = 0;
    if (!call->start.compare_exchange_strong(waiting, 1)) return;  // not made: done was told
    if (call->start_timer != 0) clock->cancel(call->start_timer);
    Dispatch d = call->route ? call->dispatcher->call(*call->route, call->request, call->control)
                             : call->dispatcher->dispatch(call->request, call->control);
    int running = 0;
    if (call->state.compare_exchange_strong(running, 1)) {
      clock->cancel(call->timer);
    } else {
      d.deadline_passed = true;
      d.outcome = answeredAfterDeadline(timeout, d);
      call->state = 3;  // returned after the deadline
    }
    call->dispatcher.reset();  // the generation is let go before the answer is sent
    call->done(std::move(d));
  });
}

}  // namespace plugboard::core

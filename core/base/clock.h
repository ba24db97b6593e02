// core/base/clock.h: time, behind an interface (as LevelDB's Env), so that what waits for a
// deadline can be tested on virtual time.
//
// Clock reads the time. AlarmClock adds timers: at(when, fire) runs `fire` once, when the
// clock reaches `when`, on the clock's own timer thread (the steady clock's belongs to
// core/base/work_pool.h) or, for ManualClock, on the thread that advances it. `fire` must
// be quick and must not block: it cancels a call, posts a reply, wakes a waiter.
// cancel(id) stops a timer that has not started firing; it returns false when the timer
// fired or is firing, so the caller knows the other side has run or will run.
//
// Every deadline of the runtime is a timer on one AlarmClock: `serve`'s call deadlines and
// reply deadlines (core/routing/timed_dispatch.h, core/serving/argo_calls.h), a start's
// bound (core/launch/start_control.h), the plugin watcher's debounce
// (core/routing/live_runtime.h). The runner reads its time from a Clock too
// (core/workflows/run_env.h).
//
// Thread-safety: every member may be called from any thread.
#ifndef PLUGBOARD_CORE_BASE_CLOCK_H_
#define PLUGBOARD_CORE_BASE_CLOCK_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace plugboard::core {

class Clock {
 public:
  using Steady = std::chrono::steady_clock;
  using TimePoint = Steady::time_point;

  virtual ~Clock() = default;
  virtual TimePoint now() = 0;
};

class AlarmClock : public Clock {
 public:
  using TimerId = std::uint64_t;

  // Runs `fire` once when now() >= `when` (at once, on the timers' thread, when it is past).
  virtual TimerId at(TimePoint when, std::function<void()> fire) = 0;
  TimerId after(std::chrono::nanoseconds d, std::function<void()> fire) {
    return at(now() + d, std::move(fire));
  }
  // True when the timer will not fire; false when it fired, is firing or is unknown.
  virtual bool cancel(TimerId id) = 0;
};

// The timers of one AlarmClock, without a thread or a lock: whoever keeps the clock's time
// asks them what is due. Used by the steady clock (work_pool.cc) and ManualClock.
class TimerQueue {
 public:
  AlarmClock::TimerId add(Clock::TimePoint when, std::function<void()> fire);
  bool cancel(AlarmClock::TimerId id);
  // Takes the first timer due at `now`, if any; false when none is.
  bool takeDue(Clock::TimePoint now, std::function<void()>& fire);
  // The earliest timer's time; TimePoint::max() when there is none.
  Clock::TimePoint next() const;
  bool empty() const { return by_time_.empty(); }
  std::size_t size() const { return by_time_.size(); }

 private:
  AlarmClock::TimerId last_ = 0;
  std::multimap<Clock::TimePoint, std::pair<AlarmClock::TimerId, std::function<void()>>> by_time_;
  std::map<AlarmClock::TimerId, decltype(by_time_)::iterator> by_id_;
};

// Virtual time for tests: starts at the steady clock's reading when made and moves only
// in advance(), which fires the timers that come due, in order, on the calling thread.
class ManualClock final : public AlarmClock {
 public:
  ManualClock() : now_(Steady::now()) {}
  TimePoint now() override;
  TimerId at(TimePoint when, std::function<void()> fire) override;
  bool cancel(TimerId id) override;
  // Moves the clock `d` forward, firing each timer due on the way at its own time.
  void advance(std::chrono::nanoseconds d);
  // Timers not yet fired.
  std::size_t pending();

 private:
  std::mutex mu_;
  TimePoint now_;
  TimerQueue timers_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_BASE_CLOCK_H_

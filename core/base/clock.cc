#include "core/base/clock.h"

namespace plugboard::core {

AlarmClock::TimerId TimerQueue::add(Clock::TimePoint when, std::function<void()> fire) {
  const auto id = ++last_;
  by_id_.emplace(id, by_time_.emplace(when, std::make_pair(id, std::move(fire))));
  return id;
}

bool TimerQueue::cancel(AlarmClock::TimerId id) {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return false;
  by_time_.erase(it->second);
  by_id_.erase(it);
  return true;
}

bool TimerQueue::takeDue(Clock::TimePoint now, std::function<void()>& fire) {
  if (by_time_.empty() || by_time_.begin()->first > now) return false;
  auto first = by_time_.begin();
  fire = std::move(first->second.second);
  by_id_.erase(first->second.first);
  by_time_.erase(first);
  return true;
}

Clock::TimePoint TimerQueue::next() const {
  return by_time_.empty() ? Clock::TimePoint::max() : by_time_.begin()->first;
}

Clock::TimePoint ManualClock::now() {
  std::lock_guard lock(mu_);
  return now_;
}

AlarmClock::TimerId ManualClock::at(TimePoint when, std::function<void()> fire) {
  std::lock_guard lock(mu_);
  return timers_.add(when, std::move(fire));
}

bool ManualClock::cancel(TimerId id) {
  std::lock_guard lock(mu_);
  return timers_.cancel(id);
}

void ManualClock::advance(std::chrono::nanoseconds d) {
  std::unique_lock lock(mu_);
  const TimePoint until = now_ + d;
  for (;;) {
    std::function<void()> fire;
    const TimePoint due = timers_.next();
    if (due > until || !timers_.takeDue(due, fire)) break;
    now_ = std::max(now_, due);
    lock.unlock();
    fire();  // without the lock: it may set or cancel timers
    lock.lock();
  }
  now_ = until;
}

std::size_t ManualClock::pending() {
  std::lock_guard lock(mu_);
  std::size_t n = 0;
  for (TimePoint t = timers_.next(); !timers_.empty() && t != TimePoint::max(); t = TimePoint::max()) ++n;
  return timers_.empty() ? 0 : n;
}

}  // namespace plugboard::core

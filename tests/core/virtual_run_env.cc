#include "tests/core/virtual_run_env.h"

#include <cstdio>
#include <cstdlib>

namespace plugboard::testing {

VirtualRunEnv::VirtualRunEnv(bool threads)
    : threads_(threads), start_(Clock::now()), now_(start_) {}

VirtualRunEnv::~VirtualRunEnv() { shutdown(); }

void VirtualRunEnv::shutdown() {
  std::vector<std::thread> calls;
  {
    std::lock_guard lock(mu_);
    shutdown_ = true;
    calls.swap(calls_);
  }
  cv_.notify_all();
  for (auto& t : calls) t.join();
}

VirtualRunEnv::TimePoint VirtualRunEnv::now() {
  std::lock_guard lock(mu_);
  return now_;
}

void VirtualRunEnv::execute(std::function<void()> call) {
  if (!threads_) {
    call();
    std::lock_guard lock(mu_);
    signalled_ = true;
    return;
  }
  std::lock_guard lock(mu_);
  ++active_;
  calls_.emplace_back([this, call = std::move(call)] {
    call();
    std::lock_guard lock(mu_);
    --active_;
    signalled_ = true;
    cv_.notify_all();
  });
}

void VirtualRunEnv::abandon() {
  std::lock_guard lock(mu_);
  ++abandoned_;
}

int VirtualRunEnv::abandoned() {
  std::lock_guard lock(mu_);
  return abandoned_;
}

void VirtualRunEnv::wake() {
  std::lock_guard lock(mu_);
  signalled_ = true;
  cv_.notify_all();
}

bool VirtualRunEnv::sleep(std::chrono::milliseconds d, const core::CallControl* cancel) {
  if (!threads_) {
    std::fprintf(stderr, "VirtualRunEnv: a call sleeps, but calls run inline\n");
    std::abort();
  }
  std::unique_lock lock(mu_);
  Sleeper me{now_ + d, cancel};
  sleepers_.push_back(&me);
  --active_;
  cv_.notify_all();
  cv_.wait(lock, [&] { return me.awake || shutdown_; });
  if (!me.awake) sleepers_.remove(&me);
  return cancel != nullptr && cancel->cancelled();
}

void VirtualRunEnv::at(TimePoint when, std::function<void()> action) {
  std::lock_guard lock(mu_);
  actions_.emplace(when, std::move(action));
}

void VirtualRunEnv::wakeUp(std::list<Sleeper*>::iterator it) {
  (*it)->awake = true;
  ++active_;
  sleepers_.erase(it);
  cv_.notify_all();
}

void VirtualRunEnv::waitUntil(TimePoint until) {
  std::unique_lock lock(mu_);
  for (;;) {
    for (auto it = sleepers_.begin(); it != sleepers_.end();) {
      auto next = std::next(it);
      if ((*it)->cancel != nullptr && (*it)->cancel->cancelled()) wakeUp(it);
      it = next;
    }
    if (signalled_) {
      signalled_ = false;
      return;
    }
    if (active_ > 0) {
      cv_.wait(lock);
      continue;
    }
    if (now_ >= until) return;
    // Everything is asleep: move the clock to the next thing that happens.
    TimePoint next = until;
    for (const Sleeper* s : sleepers_) next = std::min(next, s->due);
    if (!actions_.empty()) next = std::min(next, actions_.begin()->first);
    if (next == TimePoint::max()) {
      std::fprintf(stderr,
                   "VirtualRunEnv: the runner waits for ever: nothing runs, sleeps or is due\n");
      std::abort();
    }
    now_ = std::max(now_, next);
    for (auto it = sleepers_.begin(); it != sleepers_.end();) {
      auto after = std::next(it);
      if ((*it)->due <= now_) wakeUp(it);
      it = after;
    }
    if (!actions_.empty() && actions_.begin()->first <= now_) {
      auto action = std::move(actions_.begin()->second);
      actions_.erase(actions_.begin());
      lock.unlock();
      action();
      lock.lock();
    }
  }
}

}  // namespace plugboard::testing

#include "core/base/work_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <list>
#include <mutex>
#include <thread>

namespace plugboard::core {
namespace {

// The steady clock; its timers fire on one thread, started with the first timer.
class SteadyAlarmClock final : public AlarmClock {
 public:
  ~SteadyAlarmClock() override { stop(); }

  TimePoint now() override { return Steady::now(); }

  TimerId at(TimePoint when, std::function<void()> fire) override {
    bool earlier;
    TimerId id;
    {
      std::lock_guard lock(mu_);
      if (!thread_.joinable() && !stopped_) thread_ = std::thread([this] { run(); });
      earlier = when < timers_.next();
      id = timers_.add(when, std::move(fire));
    }
    if (earlier) cv_.notify_one();  // the thread sleeps past this one
    return id;
  }

  bool cancel(TimerId id) override {
    std::lock_guard lock(mu_);
    return timers_.cancel(id);
  }

  // Drops the timers not yet fired and joins the thread.
  void stop() {
    {
      std::lock_guard lock(mu_);
      stopped_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    std::unique_lock lock(mu_);
    while (!stopped_) {
      std::function<void()> fire;
      if (timers_.takeDue(Steady::now(), fire)) {
        lock.unlock();
        fire();
        fire = nullptr;
        lock.lock();
        continue;
      }
      const TimePoint next = timers_.next();
      if (next == TimePoint::max()) {
        cv_.wait(lock);
      } else {
        cv_.wait_until(lock, next);
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  TimerQueue timers_;
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace

struct WorkPool::State {
  State(int w, std::chrono::microseconds s) : workers(std::max(1, w)), spin(s) {}

  struct Worker {
    std::thread thread;
    bool busy = false;
    bool exited = false;
  };

  const int workers;
  const std::chrono::microseconds spin;
  SteadyAlarmClock clock;

  mutable std::mutex mu;  // guards everything below
  std::condition_variable work_cv;  // tasks came, or stop
  std::condition_variable idle_cv;  // a task ended while stopping
  std::deque<std::function<void()>> tasks;
  std::atomic<std::size_t> queued{0};  // tasks.size(), for polling without the lock
  std::list<Worker> threads;           // exited ones are joined by the next spawn()
  int running = 0;                     // threads not exited
  int busy = 0;
  int abandoned = 0;  // tasks running that are not waited for
  bool started = false;
  bool stop = false;

  // REQUIRES: mu held.
  void spawn(const std::shared_ptr<State>& self) {
    for (auto it = threads.begin(); it != threads.end();) {
      if (it->exited) {
        it->thread.join();  // it has left its loop: returns at once
        it = threads.erase(it);
      } else {
        ++it;
      }
    }
    ++running;
    Worker& w = threads.emplace_back();
    w.thread = std::thread([self, &w] { self->work(w); });
  }

  void work(Worker& me) {
    std::unique_lock lock(mu);
    for (;;) {
      if (tasks.empty() && !stop && spin.count() > 0) {
        lock.unlock();
        const auto until = Clock::Steady::now() + spin;
        while (queued.load(std::memory_order_acquire) == 0 && Clock::Steady::now() < until) {
          std::this_thread::yield();
        }
        lock.lock();
      }
      work_cv.wait(lock, [&] { return stop || !tasks.empty(); });
      if (tasks.empty()) break;  // stopping, and every task ran
      std::function<void()> task = std::move(tasks.front());
      tasks.pop_front();
      queued.store(tasks.size(), std::memory_order_release);
      ++busy;
      me.busy = true;
      lock.unlock();
      task();
      task = nullptr;
      lock.lock();
      --busy;
      me.busy = false;
      // At most `busy` abandoned tasks can still be running.
      abandoned = std::min(abandoned, busy);
      if (stop) idle_cv.notify_all();
      // A thread added for an abandoned task, no longer needed, leaves.
      if (!stop && running - busy > workers && tasks.empty()) break;
    }
    --running;
    me.exited = true;
  }
};

WorkPool::WorkPool(int workers, std::chrono::microseconds spin)
    : state_(std::make_shared<State>(workers, spin)) {}

WorkPool::~WorkPool() {
  State& s = *state_;
  s.clock.stop();
  std::list<State::Worker> threads;
  {
    std::unique_lock lock(s.mu);
    s.stop = true;
    s.work_cv.notify_all();
    // Drains: queued tasks run, running ones end; only abandoned ones are not waited for.
    s.idle_cv.wait(lock, [&] { return s.tasks.empty() && s.busy <= s.abandoned; });
    threads.splice(threads.end(), s.threads);
  }
  for (auto& w : threads) {
    bool in_abandoned_task;
    {
      std::lock_guard lock(s.mu);
      in_abandoned_task = w.busy;
    }
    if (in_abandoned_task) {
      w.thread.detach();  // in a call that ignored its cancellation: ends when it returns
    } else {
      w.thread.join();
    }
  }
}

void WorkPool::post(std::function<void()> task) {
  State& s = *state_;
  {
    std::lock_guard lock(s.mu);
    s.tasks.push_back(std::move(task));
    s.queued.store(s.tasks.size(), std::memory_order_release);
    if (!s.started) {  // the workers start with the first task
      s.started = true;
      for (int i = 0; i < s.workers; ++i) s.spawn(state_);
    }
    // A thread more when none is idle for it and fewer than `workers` tasks that are not
    // abandoned run.
    if (s.running - s.busy < static_cast<int>(s.tasks.size()) &&
        s.running < s.workers + s.abandoned) {
      s.spawn(state_);
    }
  }
  s.work_cv.notify_one();
}

void WorkPool::abandon() {
  State& s = *state_;
  std::lock_guard lock(s.mu);
  ++s.abandoned;
  if (!s.stop && !s.tasks.empty()) s.spawn(state_);
}

AlarmClock& WorkPool::clock() { return state_->clock; }

int WorkPool::workers() const { return state_->workers; }

int WorkPool::threads() const {
  std::lock_guard lock(state_->mu);
  return state_->running;
}

int WorkPool::busy() const {
  std::lock_guard lock(state_->mu);
  return state_->busy;
}

std::unique_ptr<AlarmClock> steadyClock() { return std::make_unique<SteadyAlarmClock>(); }

}  // namespace plugboard::core

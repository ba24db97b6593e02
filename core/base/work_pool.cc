#include "core/base/work_pool.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

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
      // The thread wakes at wake_at_ anyway, and then waits for the earliest timer: a timer
      // after that (a deadline set after others of the same length, or after a cancelled
      // one) costs it no wake-up.
      earlier = when < wake_at_;
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
      wake_at_ = timers_.next();
      if (wake_at_ == TimePoint::max()) {
        cv_.wait(lock);
      } else {
        cv_.wait_until(lock, wake_at_);
      }
      wake_at_ = TimePoint::min();  // awake: looks at the timers before it sleeps again
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  TimerQueue timers_;
  TimePoint wake_at_ = TimePoint::min();  // when the thread wakes, if it sleeps
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace

// An idle thread not woken for this long ends.
constexpr auto kRetireAfter = std::chrono::seconds(1);

struct WorkPool::State {
  State(int w, std::chrono::microseconds s, std::chrono::milliseconds l)
      : workers(std::max(1, w)), spin(s), lower_after(l) {}

  struct Worker {
    std::thread thread;
    std::condition_variable cv;  // woken, or stop
    bool busy = false;
    bool woken = false;  // taken off `idle` by post() to run the tasks queued
    bool exited = false;
    pid_t tid = 0;             // the thread's, for setpriority()
    Clock::TimePoint started;  // its task's start, while busy (with lower_after)
    bool lowered = false;      // its task ran past lower_after: it ends with it
  };

  const int workers;
  const std::chrono::microseconds spin;
  const std::chrono::milliseconds lower_after;  // zero: never
  SteadyAlarmClock clock;
  bool sweep_armed = false;  // a timer will look for tasks past lower_after (guarded by mu)

  mutable std::mutex mu;  // guards everything below
  std::condition_variable idle_cv;  // a task ended while stopping
  std::deque<std::function<void()>> tasks;
  std::atomic<std::size_t> queued{0};  // tasks.size(), for polling without the lock
  // Every thread; exited ones are joined by the next spawn(). Shared with post(), which
  // wakes one after letting the lock go.
  std::list<std::shared_ptr<Worker>> threads;
  // The threads asleep waiting for work, the one that slept last at the back: post() wakes
  // it, whose stack and caches are warm, and the others stay asleep as long as they are
  // not needed.
  std::vector<std::shared_ptr<Worker>> idle;
  int running = 0;  // threads not exited
  int busy = 0;
  int coming = 0;   // threads woken or started for the queued tasks, not yet at them
  int spinning = 0;  // threads polling `queued` before they sleep
  // Threads whose task returned, on their way back to the lock: each looks at the queue
  // before it sleeps. Raised without the lock, lowered with it.
  std::atomic<int> finishing{0};
  int abandoned = 0;  // tasks running that are not waited for
  bool stop = false;

  // REQUIRES: mu held.
  void spawn(const std::shared_ptr<State>& self) {
    for (auto it = threads.begin(); it != threads.end();) {
      if ((*it)->exited) {
        (*it)->thread.join();  // it has left its loop: returns at once
        it = threads.erase(it);
      } else {
        ++it;
      }
    }
    ++running;
    ++coming;
    auto w = std::make_shared<Worker>();
    threads.push_back(w);
    w->thread = std::thread([self, w] { self->work(self, w); });
  }

  // Lowers the threads whose task has run past lower_after to the lowest priority:
  // SCHED_IDLE (run only when no other thread wants the CPU), and nice 19 where that is
  // refused. A process may lower its own threads without privileges but not raise them
  // back, so such a thread ends with its task. A task that spins then takes CPU from the
  // short ones only while they leave it idle. Runs on the clock's thread.
  void sweep() {
    std::lock_guard lock(mu);
    sweep_armed = false;
    const auto now = Clock::Steady::now();
    auto next = Clock::TimePoint::max();
    for (const auto& w : threads) {
      if (!w->busy || w->lowered || w->exited) continue;
      if (now - w->started >= lower_after) {
        const sched_param none{};
        if (::sched_setscheduler(w->tid, SCHED_IDLE, &none) != 0) {
          ::setpriority(PRIO_PROCESS, static_cast<id_t>(w->tid), 19);
        }
        w->lowered = true;
      } else {
        next = std::min(next, w->started + lower_after);
      }
    }
    if (next != Clock::TimePoint::max() && !stop) armSweep(next);
  }
  // REQUIRES: mu held.
  void armSweep(Clock::TimePoint when) {
    sweep_armed = true;
    clock.at(when, [this] { sweep(); });
  }

  // A thread for the task just queued, when the threads awake may not take it: the idle
  // one that slept last, or a new one while fewer than `workers` tasks that are not
  // abandoned run. REQUIRES: mu held.
  std::shared_ptr<Worker> wakeFor(const std::shared_ptr<State>& self) {
    const int awake = coming + spinning + finishing.load(std::memory_order_relaxed);
    if (static_cast<int>(tasks.size()) <= awake) return nullptr;
    if (!idle.empty()) {
      std::shared_ptr<Worker> w = std::move(idle.back());
      idle.pop_back();
      w->woken = true;
      ++coming;
      return w;
    }
    if (running < workers + abandoned) spawn(self);
    return nullptr;
  }

  void work(const std::shared_ptr<State>& state, const std::shared_ptr<Worker>& self) {
    Worker& me = *self;
    std::unique_lock lock(mu);
    me.tid = ::gettid();
    --coming;  // started
    for (;;) {
      if (tasks.empty() && !stop && spin.count() > 0) {
        ++spinning;
        lock.unlock();
        const auto until = Clock::Steady::now() + spin;
        while (queued.load(std::memory_order_acquire) == 0 && Clock::Steady::now() < until) {
          std::this_thread::yield();
        }
        lock.lock();
        --spinning;
      }
      while (tasks.empty() && !stop) {
        // A thread added for an abandoned task, no longer needed, leaves.
        if (running - busy > workers) {
          --running;
          me.exited = true;
          return;
        }
        idle.push_back(self);
        if (!me.cv.wait_for(lock, kRetireAfter, [&] { return me.woken || stop; })) {
          // Not needed for that long: a thread started for a burst of calls ends.
          std::erase(idle, self);
          --running;
          me.exited = true;
          return;
        }
        if (me.woken) {
          me.woken = false;
          --coming;
        } else {
          std::erase(idle, self);
        }
      }
      if (tasks.empty()) break;  // stopping, and every task ran
      std::function<void()> task = std::move(tasks.front());
      tasks.pop_front();
      queued.store(tasks.size(), std::memory_order_release);
      ++busy;
      me.busy = true;
      if (lower_after.count() > 0) {
        me.started = Clock::Steady::now();
        if (!sweep_armed && !stop) armSweep(me.started + lower_after);
      }
      lock.unlock();
      task();
      task = nullptr;
      finishing.fetch_add(1, std::memory_order_relaxed);
      lock.lock();
      finishing.fetch_sub(1, std::memory_order_relaxed);
      --busy;
      me.busy = false;
      // At most `busy` abandoned tasks can still be running.
      abandoned = std::min(abandoned, busy);
      if (stop) idle_cv.notify_all();
      if (me.lowered) {
        // It cannot raise its priority back: it ends, and a thread at the normal priority
        // takes the tasks queued, if the threads awake may not.
        --running;
        me.exited = true;
        if (!tasks.empty() && !stop) {
          if (auto w = wakeFor(state)) w->cv.notify_one();
        }
        return;
      }
    }
    --running;
    me.exited = true;
  }
};

WorkPool::WorkPool(int workers, std::chrono::microseconds spin,
                   std::chrono::milliseconds lower_after)
    : state_(std::make_shared<State>(workers, spin, lower_after)) {}

WorkPool::~WorkPool() {
  State& s = *state_;
  s.clock.stop();
  std::list<std::shared_ptr<State::Worker>> threads;
  {
    std::unique_lock lock(s.mu);
    s.stop = true;
    for (const auto& w : s.threads) w->cv.notify_one();
    // Drains: queued tasks run, running ones end; only abandoned ones are not waited for.
    s.idle_cv.wait(lock, [&] { return s.tasks.empty() && s.busy <= s.abandoned; });
    threads.splice(threads.end(), s.threads);
  }
  for (auto& w : threads) {
    bool in_abandoned_task;
    {
      std::lock_guard lock(s.mu);
      in_abandoned_task = w->busy;
    }
    if (in_abandoned_task) {
      w->thread.detach();  // in a call that ignored its cancellation: ends when it returns
    } else {
      w->thread.join();
    }
  }
}

void WorkPool::post(std::function<void()> task) {
  State& s = *state_;
  std::shared_ptr<State::Worker> wake;
  {
    std::lock_guard lock(s.mu);
    s.tasks.push_back(std::move(task));
    s.queued.store(s.tasks.size(), std::memory_order_release);
    wake = s.wakeFor(state_);
  }
  if (wake) wake->cv.notify_one();
}

void WorkPool::abandon() {
  State& s = *state_;
  std::lock_guard lock(s.mu);
  ++s.abandoned;
  if (!s.stop && !s.tasks.empty() && s.idle.empty()) s.spawn(state_);
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

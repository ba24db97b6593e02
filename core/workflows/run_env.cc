#include "core/workflows/run_env.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace plugboard::core {
namespace {

// How long a thread that ran out of work polls for more before it sleeps: a step's next
// call in a chain, or the answer to the call just handed over, usually comes sooner than
// a sleeping thread could be woken.
constexpr auto kSpin = std::chrono::microseconds(50);

// Polls `ready` (yielding the processor in between) for up to kSpin; its last answer.
template <class Ready>
bool spinFor(Ready ready) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

struct WorkerPoolEnv::Pool {
  explicit Pool(int w) : workers(std::max(1, w)) {}

  const int workers;
  std::mutex mu;  // guards everything below up to `wake_mu`
  std::condition_variable work_cv;
  std::deque<std::function<void()>> tasks;
  std::atomic<std::size_t> queued = 0;  // tasks.size(), for polling without the lock
  std::vector<std::thread> handles;
  int threads = 0;  // in the loop
  int busy = 0;     // running a call
  bool started = false;
  bool stop = false;

  std::mutex wake_mu;
  std::condition_variable wake_cv;
  std::atomic<bool> signalled = false;  // written under wake_mu

  // REQUIRES: mu held.
  void spawn(const std::shared_ptr<Pool>& self) {
    ++threads;
    handles.emplace_back([self] { self->work(); });
  }

  void signal() {
    {
      std::lock_guard lock(wake_mu);
      signalled = true;
    }
    wake_cv.notify_one();
  }

  void work() {
    std::unique_lock lock(mu);
    for (;;) {
      if (tasks.empty() && !stop) {
        lock.unlock();
        spinFor([&] { return queued.load(std::memory_order_acquire) > 0; });
        lock.lock();
      }
      work_cv.wait(lock, [&] { return stop || !tasks.empty(); });
      if (stop) break;
      std::function<void()> task = std::move(tasks.front());
      tasks.pop_front();
      queued.store(tasks.size(), std::memory_order_release);
      ++busy;
      lock.unlock();
      task();
      task = nullptr;
      signal();
      lock.lock();
      --busy;
      if (!stop && threads - busy > workers) {
        // A thread added for an abandoned call, no longer needed: leave.
        auto self = std::find_if(handles.begin(), handles.end(), [](const std::thread& t) {
          return t.get_id() == std::this_thread::get_id();
        });
        if (self != handles.end()) {
          self->detach();
          handles.erase(self);
        }
        break;
      }
    }
    --threads;
  }
};

WorkerPoolEnv::WorkerPoolEnv(int workers) : pool_(std::make_shared<Pool>(workers)) {}

WorkerPoolEnv::~WorkerPoolEnv() {
  std::vector<std::thread> handles;
  bool calls_running = false;
  {
    std::lock_guard lock(pool_->mu);
    pool_->stop = true;
    calls_running = pool_->busy > 0;
    handles.swap(pool_->handles);
  }
  pool_->work_cv.notify_all();
  for (auto& t : handles) {
    // Idle threads end at once; one running an abandoned call ends when it returns.
    if (calls_running) {
      t.detach();
    } else {
      t.join();
    }
  }
}

void WorkerPoolEnv::execute(std::function<void()> call) {
  {
    std::lock_guard lock(pool_->mu);
    if (!pool_->started) {
      pool_->started = true;
      for (int i = 0; i < pool_->workers; ++i) pool_->spawn(pool_);
    }
    pool_->tasks.push_back(std::move(call));
    pool_->queued.store(pool_->tasks.size(), std::memory_order_release);
  }
  pool_->work_cv.notify_one();
}

void WorkerPoolEnv::abandon() {
  std::lock_guard lock(pool_->mu);
  pool_->spawn(pool_);
}

void WorkerPoolEnv::wake() { pool_->signal(); }

void WorkerPoolEnv::waitUntil(TimePoint until) {
  spinFor(
      [&] { return pool_->signalled.load(std::memory_order_acquire) || Clock::now() >= until; });
  std::unique_lock lock(pool_->wake_mu);
  auto signalled = [&] { return pool_->signalled.load(); };
  if (until == TimePoint::max()) {
    pool_->wake_cv.wait(lock, signalled);
  } else {
    pool_->wake_cv.wait_until(lock, until, signalled);
  }
  pool_->signalled = false;
}

int WorkerPoolEnv::threads() const {
  std::lock_guard lock(pool_->mu);
  return pool_->threads;
}

}  // namespace plugboard::core

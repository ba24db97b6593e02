#include "core/run_env.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace plugboard::core {

struct WorkerPoolEnv::Pool {
  explicit Pool(int w) : workers(std::max(1, w)) {}

  const int workers;
  std::mutex mu;  // guards everything below up to `wake_mu`
  std::condition_variable work_cv;
  std::deque<std::function<void()>> tasks;
  std::vector<std::thread> handles;
  int threads = 0;  // in the loop
  int busy = 0;     // running a call
  bool started = false;
  bool stop = false;

  std::mutex wake_mu;
  std::condition_variable wake_cv;
  bool signalled = false;

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
      work_cv.wait(lock, [&] { return stop || !tasks.empty(); });
      if (stop) break;
      std::function<void()> task = std::move(tasks.front());
      tasks.pop_front();
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
  }
  pool_->work_cv.notify_one();
}

void WorkerPoolEnv::abandon() {
  std::lock_guard lock(pool_->mu);
  pool_->spawn(pool_);
}

void WorkerPoolEnv::wake() { pool_->signal(); }

void WorkerPoolEnv::waitUntil(TimePoint until) {
  std::unique_lock lock(pool_->wake_mu);
  auto signalled = [&] { return pool_->signalled; };
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

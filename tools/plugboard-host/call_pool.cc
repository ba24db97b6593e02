// tools/plugboard-host/call_pool.cc: see call_pool.h.
#include "call_pool.h"

#include <system_error>
#include <utility>

namespace plugboard::host_tool {

CallPool::CallPool(std::size_t size) : size_(size < 1 ? 1 : size) {
  threads_.emplace_back([this] { work(); });
}

CallPool::~CallPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  ready_.notify_all();
  for (auto& t : threads_) t.join();
}

bool CallPool::submit(std::function<void()> task) {
  std::lock_guard lock(mu_);
  tasks_.push_back(std::move(task));
  if (idle_ >= tasks_.size()) {
    ready_.notify_one();
    return true;
  }
  if (threads_.size() < size_) {
    try {
      threads_.emplace_back([this] { work(); });
      return true;
    } catch (const std::system_error&) {
      // No thread to be had: the ones there take the task when they are free.
    }
  }
  return false;
}

void CallPool::work() {
  std::unique_lock lock(mu_);
  for (;;) {
    ++idle_;
    ready_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
    --idle_;
    if (stop_) return;
    auto task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    task = nullptr;  // what it holds goes before the thread waits again
    lock.lock();
  }
}

}  // namespace plugboard::host_tool

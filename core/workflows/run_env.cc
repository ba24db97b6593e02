#include "core/workflows/run_env.h"

#include <thread>

namespace plugboard::core {
namespace {

// How long a thread that ran out of work polls for more before it sleeps: a step's next
// call in a chain, or the answer to the call just handed over, usually comes sooner than
// a sleeping thread could be woken.
constexpr auto kSpin = std::chrono::microseconds(50);

}  // namespace

WorkerPoolEnv::WorkerPoolEnv(int workers) : pool_(workers, kSpin) {}

WorkerPoolEnv::~WorkerPoolEnv() = default;

void WorkerPoolEnv::Wake::signal() {
  {
    std::lock_guard lock(mu);
    signalled = true;
  }
  cv.notify_one();
}

void WorkerPoolEnv::execute(std::function<void()> call) {
  pool_.post([wake = wake_, call = std::move(call)] {
    call();
    wake->signal();
  });
}

void WorkerPoolEnv::abandon() { pool_.abandon(); }

void WorkerPoolEnv::wake() { wake_->signal(); }

void WorkerPoolEnv::waitUntil(TimePoint until) {
  const auto spin_until = std::min(until, Clock::now() + kSpin);
  Wake& w = *wake_;
  while (!w.signalled.load(std::memory_order_acquire) && Clock::now() < spin_until) {
    std::this_thread::yield();
  }
  std::unique_lock lock(w.mu);
  auto signalled = [&] { return w.signalled.load(); };
  if (until == TimePoint::max()) {
    w.cv.wait(lock, signalled);
  } else {
    w.cv.wait_until(lock, until, signalled);
  }
  w.signalled = false;
}

}  // namespace plugboard::core

// core/workflows/run_env.h: the engine's clock and workers, behind an interface (as LevelDB's Env),
// so that tests can run workflows on a virtual clock.
//
// The engine asks now() for the time, hands each blocking plugin call to execute(), and
// between events sleeps in waitUntil(): until a call it handed over returns, wake() is
// called, or a timer of its own is due. It never sleeps on a thread of its own for a
// requeue or a retry.
//
// A RunEnv is a Clock (core/base/clock.h), the one clock interface of the runtime.
//
// WorkerPoolEnv is the production environment: the steady clock and a WorkPool of
// `workers` threads (core/base/work_pool.h, which it owns), started on the first call and
// reused for every call. A call the engine gives up on (abandon(): it ignored its
// cancellation) keeps its thread, so the pool adds one in its place; threads beyond
// `workers` that fall idle end. The pool does not wait for an abandoned call that is still
// running when it is destroyed (the CLI exits without waiting for it).
//
// Thread-safety: now() and wake() may be called from any thread; execute(), abandon() and
// waitUntil() from the scheduling thread only.
#ifndef PLUGBOARD_CORE_WORKFLOWS_RUN_ENV_H_
#define PLUGBOARD_CORE_WORKFLOWS_RUN_ENV_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>

#include "core/base/clock.h"
#include "core/base/work_pool.h"

namespace plugboard::core {

class RunEnv : public core::Clock {
 public:
  using Clock = std::chrono::steady_clock;
  using TimePoint = Clock::time_point;

  // Runs `call` on a worker. When it returns, a waitUntil() in progress (or the next one)
  // returns.
  virtual void execute(std::function<void()> call) = 0;
  // One call handed to execute() that has not returned will not be waited for: it must
  // not hold back later calls.
  virtual void abandon() = 0;
  // Makes a waitUntil() in progress, or the next one, return.
  virtual void wake() = 0;
  // Returns when a call returned or wake() was called since the last return, or when
  // now() >= `until`; possibly earlier.
  virtual void waitUntil(TimePoint until) = 0;
};

class WorkerPoolEnv final : public RunEnv {
 public:
  explicit WorkerPoolEnv(int workers);
  ~WorkerPoolEnv() override;
  WorkerPoolEnv(const WorkerPoolEnv&) = delete;
  WorkerPoolEnv& operator=(const WorkerPoolEnv&) = delete;

  TimePoint now() override { return pool_.clock().now(); }
  void execute(std::function<void()> call) override;
  void abandon() override;
  void wake() override;
  void waitUntil(TimePoint until) override;

  // Threads in the pool now (for tests).
  int threads() const { return pool_.threads(); }

 private:
  // What a returning call signals; shared with the calls, as an abandoned one may return
  // after the environment is gone.
  struct Wake {
    std::mutex mu;
    std::condition_variable cv;
    std::atomic<bool> signalled = false;  // written under mu
    void signal();
  };
  const std::shared_ptr<Wake> wake_ = std::make_shared<Wake>();
  WorkPool pool_;                        // last: destroyed first, it waits for its calls
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_RUN_ENV_H_

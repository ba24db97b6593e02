// core/base/work_pool.h: the runtime's threads for blocking work, and the steady clock's
// timer thread. The one place in the core that makes a thread.
//
// The model (STYLE: Envoy's dispatcher): threads that wait on sockets (serve's event loops,
// core/serving/http_server.h) only do I/O; every call that may block (a plugin call, a
// reload, a start) is posted to a WorkPool and its result handed back to whoever asked
// (serve posts it to the connection's strand); every deadline is a timer on clock().
//
// A pool runs at most `workers` tasks at once; more wait in order. A thread starts when a
// task is queued that no thread awake will take and none is idle, so making a pool starts
// none (nor does clock(), whose timer thread starts with the first timer), and a pool runs
// on as many threads as its tasks ever needed at once, not on `workers`. A task wakes at
// most one idle thread, and only when the threads awake are fewer than the tasks queued;
// the one woken is the one that fell idle last (LIFO: warm stack and caches, and the
// others stay asleep, each with its malloc arena unused); a thread idle for a second ends.
// A thread whose task just returned counts as awake: it looks at the queue before it
// sleeps. A worker out of work polls for
// `spin` before it sleeps: for a caller that hands over a chain of short tasks that is
// cheaper than a sleep and a wake-up.
//
// A task whose call ignored its cancellation may never return: its owner calls abandon(),
// and the pool adds a thread in its place so that the bound still serves other tasks; a
// thread beyond `workers` that falls idle ends. The destructor stops the timers, lets
// queued tasks run, waits for every running task that was not abandoned, and joins its
// threads; a thread still in an abandoned task is not waited for (it ends when its call
// returns, or with the process).
//
// With `lower_after`, a task that has run that long has its thread lowered to the lowest
// priority (SCHED_IDLE, else nice 19), and that thread ends when the task returns (it may
// not raise its priority back): a task that spins or runs long then takes the CPU from short ones only
// while they leave it idle (serve's calls, docs/serve.md).
//
// Owners: `serve`'s HttpServer (its calls, core/serving/http_server.h), the runner's
// WorkerPoolEnv (core/workflows/run_env.h) and `exec`'s dispatchWithDeadline
// (core/routing/timed_dispatch.h) each own one; the pool must outlive what its tasks use.
// A steady clock without a pool (steadyClock()) is owned by core/runtime's Runtime, for
// the bounds on the starts the one-shot commands make before a run (StartDeadline).
//
// Thread-safety: every member may be called from any thread, tasks included.
#ifndef PLUGBOARD_CORE_BASE_WORK_POOL_H_
#define PLUGBOARD_CORE_BASE_WORK_POOL_H_

#include <chrono>
#include <functional>
#include <memory>

#include "core/base/clock.h"

namespace plugboard::core {

class WorkPool {
 public:
  explicit WorkPool(int workers, std::chrono::microseconds spin = std::chrono::microseconds(0),
                    std::chrono::milliseconds lower_after = std::chrono::milliseconds(0));
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  // Runs `task` on a worker, after the tasks posted before it.
  void post(std::function<void()> task);
  // A task that is running will not be waited for: another thread takes its place.
  void abandon();
  // The steady clock, with timers fired on the pool's timer thread.
  AlarmClock& clock();

  int workers() const;
  // Threads running or waiting for tasks now, and tasks running now (for tests).
  int threads() const;
  int busy() const;

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with the threads: an abandoned one may outlive it
};

// The steady clock with a timer thread of its own (started with its first timer, joined
// when it is destroyed), for an owner that needs timers but no pool.
std::unique_ptr<AlarmClock> steadyClock();

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_BASE_WORK_POOL_H_

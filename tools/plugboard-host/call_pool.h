// tools/plugboard-host/call_pool.h: the threads that run the plugin's calls.
//
// At most `size` threads, started as calls need them (one at construction) and kept, so
// that the host holds a thread per call running at its busiest moment, never more than
// `size`; calls beyond that wait their turn, first in, first out. These are the only
// threads plugboard-host starts.
//
// Threads. submit() is the I/O thread's (HostLoop); the tasks run on the pool's threads.
// Owner: main() makes the pool and never destroys it: the process ends with _Exit while
// calls that did not answer in time may still be running plugin code, so the threads are
// neither joined nor detached.
#ifndef PLUGBOARD_TOOLS_PLUGBOARD_HOST_CALL_POOL_H_
#define PLUGBOARD_TOOLS_PLUGBOARD_HOST_CALL_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace plugboard::host_tool {

class CallPool {
 public:
  // Starts the first thread; throws std::system_error when it cannot.
  explicit CallPool(std::size_t size);
  CallPool(const CallPool&) = delete;
  CallPool& operator=(const CallPool&) = delete;
  ~CallPool();  // REQUIRES: no task runs (main never destroys it; see above)

  // Runs `task` on an idle thread, on a new one while there are fewer than `size`, or
  // when one is free. If no new thread can be had (out of memory or threads), the
  // threads there are take it in turn. True when a thread takes it now; false when it
  // waits for one.
  bool submit(std::function<void()> task);

 private:
  void work();

  const std::size_t size_;
  std::mutex mu_;  // guards the members below
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  std::size_t idle_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace plugboard::host_tool

#endif  // PLUGBOARD_TOOLS_PLUGBOARD_HOST_CALL_POOL_H_

// tests/support/cancel.h: cancelling a call while it runs, however long it takes to start.
#ifndef PLUGBOARD_TESTS_SUPPORT_CANCEL_H_
#define PLUGBOARD_TESTS_SUPPORT_CANCEL_H_

#include <atomic>
#include <chrono>
#include <thread>

namespace plugboard::testing {

// Runs `call()` on this thread while another calls `cancel()` every few milliseconds until
// it returns, and returns what it returned. A cancel that comes before the call has begun
// finds nothing to cancel; the next one finds the call running. So a test need not guess
// how long the call takes to start.
template <class Call, class Cancel>
auto cancelWhileRunning(Call call, Cancel cancel) {
  std::atomic<bool> returned{false};
  std::thread canceller([&] {
    while (!returned) {
      cancel();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  struct Join {
    std::atomic<bool>& returned;
    std::thread& thread;
    ~Join() {
      returned = true;
      thread.join();
    }
  } join{returned, canceller};
  return call();
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_CANCEL_H_

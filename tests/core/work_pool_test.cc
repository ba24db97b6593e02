// WorkPool: the one pool of threads for blocking work, and its clock's timers.
#include "core/base/work_pool.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

TEST(WorkPoolTest, RunsAtMostItsBoundOfTasksAtOnceAndTheRestInOrder) {
  // Declared before the pool: its destructor runs the queued third task, which must find
  // its promise alive.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> started{0};
  std::promise<void> third;
  WorkPool pool(2);
  for (int i = 0; i < 2; ++i) {
    pool.post([&, released] {
      ++started;
      released.wait();
    });
  }
  pool.post([&] { third.set_value(); });
  while (pool.busy() < 2) std::this_thread::yield();
  // Both threads are held: the third task cannot have started.
  EXPECT_EQ(third.get_future().wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  EXPECT_EQ(pool.threads(), 2);
  release.set_value();
}

TEST(WorkPoolTest, TasksOneAfterAnotherRunOnOneThreadHoweverLargeTheBound) {
  // The worker that fell idle last takes the next task, and no thread starts while one is
  // idle: a pool sized for bursts does not cycle its calls through all its threads (each
  // with its own stack and malloc arena: serve's memory grew with the bound).
  WorkPool pool(64);
  for (int i = 0; i < 20; ++i) {
    std::promise<void> ran;
    pool.post([&] { ran.set_value(); });
    ran.get_future().wait();
    // busy() takes the pool's lock, which the worker holds from its task's end until it
    // sleeps: at 0 it is idle.
    while (pool.busy() != 0) std::this_thread::yield();
  }
  EXPECT_EQ(pool.threads(), 1);
}

TEST(WorkPoolTest, DestroyingItRunsQueuedTasksAndWaitsForRunningOnes) {
  std::atomic<int> ran{0};
  {
    WorkPool pool(1);
    std::promise<void> entered;
    pool.post([&] {
      entered.set_value();
      std::this_thread::yield();
      ++ran;
    });
    for (int i = 0; i < 10; ++i) pool.post([&] { ++ran; });
    entered.get_future().wait();
  }  // shutdown drains: no sleep, no task dropped
  EXPECT_EQ(ran, 11);
}

TEST(WorkPoolTest, ItsClockFiresTimersInOrderAndCancelledOnesNever) {
  WorkPool pool(1);
  AlarmClock& clock = pool.clock();
  std::promise<void> done;
  std::atomic<int> order{0}, first{0}, cancelled{0};
  const auto now = clock.now();
  clock.at(now + std::chrono::milliseconds(2), [&] {
    EXPECT_EQ(first.load(), 1);
    done.set_value();
  });
  const auto never = clock.at(now + std::chrono::milliseconds(1), [&] { ++cancelled; });
  clock.at(now, [&] { first = ++order; });
  EXPECT_TRUE(clock.cancel(never));
  done.get_future().wait();
  EXPECT_EQ(cancelled, 0);
}

TEST(WorkPoolTest, ATaskThatRunsLongIsLoweredAndItsThreadEndsWithIt) {
  const int normal = getpriority(PRIO_PROCESS, 0);  // this thread's; the pool's inherit it
  if (normal == 19) GTEST_SKIP() << "the test runs at nice 19 already";
  WorkPool pool(2, std::chrono::microseconds(0), std::chrono::milliseconds(20));
  std::promise<bool> long_task;
  pool.post([&] {
    // Runs until the pool lowers it (SCHED_IDLE, or nice 19 where that is refused); the
    // bound only keeps a broken build from hanging.
    const auto lowered = [] {
      return sched_getscheduler(0) == SCHED_IDLE || getpriority(PRIO_PROCESS, gettid()) == 19;
    };
    for (int i = 0; i < 1000 && !lowered(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    long_task.set_value(lowered());
  });
  EXPECT_TRUE(long_task.get_future().get());
  // Its thread cannot be raised back: the next task runs on a thread at the normal priority.
  std::promise<bool> short_task;
  pool.post([&] {
    short_task.set_value(sched_getscheduler(0) == SCHED_OTHER &&
                         getpriority(PRIO_PROCESS, gettid()) == normal);
  });
  EXPECT_TRUE(short_task.get_future().get());
}

TEST(ManualClockTest, TimersFireOnlyWhenTheClockIsAdvancedToThem) {
  ManualClock clock;
  int fired = 0;
  clock.after(std::chrono::seconds(10), [&] { ++fired; });
  clock.advance(std::chrono::seconds(9));
  EXPECT_EQ(fired, 0);
  clock.advance(std::chrono::seconds(1));
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(clock.pending(), 0u);
}

}  // namespace
}  // namespace plugboard::core

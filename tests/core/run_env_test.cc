// WorkerPoolEnv: the production clock and workers of the runner.
#include "core/workflows/run_env.h"

#include <atomic>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

// Waits in `env` until `done` holds; a generous bound only keeps a broken pool from
// hanging the suite.
bool waitFor(WorkerPoolEnv& env, const std::function<bool()>& done) {
  const auto give_up = RunEnv::Clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (RunEnv::Clock::now() > give_up) return false;
    env.waitUntil(RunEnv::Clock::now() + std::chrono::milliseconds(100));
  }
  return true;
}

TEST(WorkerPoolEnvTest, CallsRunOnAFixedSetOfThreadsStartedOnTheFirstCall) {
  WorkerPoolEnv env(3);
  EXPECT_EQ(env.threads(), 0);
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::atomic<int> done = 0;
  for (int i = 0; i < 200; ++i) {
    env.execute([&] {
      {
        std::lock_guard lock(mu);
        ids.insert(std::this_thread::get_id());
      }
      ++done;
    });
  }
  ASSERT_TRUE(waitFor(env, [&] { return done == 200; }));
  EXPECT_EQ(env.threads(), 3);
  EXPECT_LE(ids.size(), 3u);
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 0u);
}

TEST(WorkerPoolEnvTest, WaitReturnsWhenACallReturnsOrOnWake) {
  WorkerPoolEnv env(1);
  std::atomic<bool> ran = false;
  env.execute([&] { ran = true; });
  env.waitUntil(RunEnv::TimePoint::max());  // returns: the call returned
  EXPECT_TRUE(ran);
  std::thread waker([&] { env.wake(); });
  env.waitUntil(RunEnv::TimePoint::max());  // returns: woken
  waker.join();
  const auto past = env.now();
  env.waitUntil(past);  // a time already passed: at once
}

TEST(WorkerPoolEnvTest, AnAbandonedCallDoesNotHoldBackLaterOnes) {
  auto release = std::make_shared<std::promise<void>>();
  std::shared_future<void> released = release->get_future().share();
  {
    WorkerPoolEnv env(1);
    env.execute([released] { released.wait(); });  // ignores everything until released
    env.abandon();
    std::atomic<bool> second = false;
    env.execute([&] { second = true; });
    EXPECT_TRUE(waitFor(env, [&] { return second.load(); }));
    EXPECT_EQ(env.threads(), 2);
  }  // destroyed with the abandoned call still running: not joined
  release->set_value();
}

TEST(WorkerPoolEnvTest, AThreadAddedForAnAbandonedCallLeavesOnceItIsNotNeeded) {
  WorkerPoolEnv env(1);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> done = 0;
  env.execute([&, released] {
    released.wait();
    ++done;
  });
  env.abandon();
  release.set_value();
  ASSERT_TRUE(waitFor(env, [&] { return done == 1; }));
  ASSERT_TRUE(waitFor(env, [&] { return env.threads() == 1; }));
}

}  // namespace
}  // namespace plugboard::core

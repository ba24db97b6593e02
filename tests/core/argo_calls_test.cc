// ArgoCalls: a call asked for again while it runs, or after it ended, is not run again.
#include "core/serving/argo_calls.h"

#include <atomic>
#include <future>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

using std::chrono::milliseconds;

Dispatch succeeded(const std::string& message) {
  Dispatch d;
  d.handled = true;
  d.plugin = "p";
  d.outcome = {Phase::kSucceeded, message, Json::object(), {}};
  return d;
}

TEST(ArgoCallsTest, ACallIsRunOnceWhileItIsAskedForAgainAndAfterItEnded) {
  ArgoCalls calls(milliseconds(20), std::chrono::minutes(10), 100);
  std::atomic<int> runs{0};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  const auto run = [&] {
    ++runs;
    released.wait();
    return succeeded("done");
  };
  // Answered at the reply deadline while the call goes on; asked again, it is not started again.
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(calls.execute("body", run, nullptr).has_value());
  // Many at once, as when Argo sends again while a reply is still on its way.
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&] { calls.execute("body", run, nullptr); });
  for (auto& t : threads) t.join();
  release.set_value();
  std::optional<Dispatch> d;
  for (int i = 0; i < 500 && !d; ++i) d = calls.execute("body", run, nullptr);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->outcome.message, "done");
  // A retry after a lost reply gets the same answer.
  auto again = calls.execute("body", run, nullptr);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->outcome.message, "done");
  EXPECT_EQ(runs, 1);
  // Other work (another body) is another call.
  auto other = calls.execute(
      "other body",
      [&] {
        ++runs;
        return succeeded("other");
      },
      nullptr);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->outcome.message, "other");
  EXPECT_EQ(runs, 2);
}

TEST(ArgoCallsTest, KeepsAtMostTheConfiguredNumberOfOutcomes) {
  ArgoCalls calls(milliseconds(10'000), std::chrono::minutes(10), 3);
  int runs = 0;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(calls.execute(
        "body " + std::to_string(i),
        [&] {
          ++runs;
          return succeeded("x");
        },
        nullptr));
    EXPECT_LE(calls.entries(), 3u);
  }
  EXPECT_EQ(calls.entries(), 3u);
  // The newest are kept; the oldest was dropped and runs again.
  calls.execute(
      "body 9",
      [&] {
        ++runs;
        return succeeded("x");
      },
      nullptr);
  EXPECT_EQ(runs, 10);
  calls.execute(
      "body 0",
      [&] {
        ++runs;
        return succeeded("x");
      },
      nullptr);
  EXPECT_EQ(runs, 11);
}

TEST(ArgoCallsTest, DropsOutcomesKeptLongerThanConfigured) {
  ArgoCalls calls(milliseconds(10'000), milliseconds(20), 100);
  int runs = 0;
  const auto run = [&] {
    ++runs;
    return succeeded("x");
  };
  calls.execute("body", run, nullptr);
  calls.execute("body", run, nullptr);
  EXPECT_EQ(runs, 1);
  std::this_thread::sleep_for(milliseconds(60));
  calls.execute("body", run, nullptr);
  EXPECT_EQ(runs, 2);
}

TEST(ArgoCallsTest, OnlyASuccessIsKeptForRequestsSentAgain) {
  ArgoCalls calls(milliseconds(10'000), std::chrono::minutes(10), 100);
  int runs = 0;
  for (const Phase phase : {Phase::kRunning, Phase::kPending, Phase::kFailed, Phase::kError}) {
    const auto run = [&] {
      ++runs;
      Dispatch d = succeeded("x");
      d.outcome.phase = phase;
      return d;
    };
    runs = 0;
    EXPECT_EQ(calls.execute("body", run, nullptr)->outcome.phase, phase);
    EXPECT_EQ(calls.execute("body", run, nullptr)->outcome.phase, phase);
    EXPECT_EQ(runs, 2) << phaseName(phase);  // the plugin is asked again
  }
  EXPECT_EQ(calls.entries(), 0u);
}

TEST(ArgoCallsTest, ACallDoesNotWaitBehindALongOne) {
  ArgoCalls calls(milliseconds(500), std::chrono::minutes(10), 100);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  EXPECT_FALSE(calls.execute(
      "long",
      [&] {
        released.wait();
        return succeeded("long");
      },
      nullptr));
  // The pool's one idle thread is busy with the long call: this one gets a thread of its own.
  auto quick = calls.execute(
      "quick", [] { return succeeded("quick"); }, nullptr);
  ASSERT_TRUE(quick.has_value());
  EXPECT_EQ(quick->outcome.message, "quick");
  release.set_value();
}

}  // namespace
}  // namespace plugboard::core

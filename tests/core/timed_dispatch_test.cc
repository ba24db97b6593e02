// Deadlines for single calls: the watcher that serve uses (calls on the caller's thread)
// and dispatchWithDeadline, which exec uses (a thread per call), on the scripted fixture.
#include "core/routing/timed_dispatch.h"

#include <atomic>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/files.h"
#include "tests/support/launch.h"
#include "tests/support/paths.h"

namespace plugboard::core {
namespace {

using plugboard::testing::fixture;
using plugboard::testing::TempDir;

DispatchRequest scripted(Json args) {
  DispatchRequest request;
  request.key = "scripted";
  request.args = std::move(args);
  return request;
}

class TimedDispatchTest : public ::testing::Test {
 protected:
  TimedDispatchTest() {
    std::filesystem::copy_file(fixture("scripted"), dir_ / "scripted.so");
    catalog_ = Catalog::scan({dir_.path()});
  }
  TempDir dir_;
  Catalog catalog_;
};

CallNotices slowAfter(std::function<void()> slow, Millis after) {
  CallNotices notices;
  notices.slow = std::move(slow);
  notices.slow_after = after;
  return notices;
}

TEST_F(TimedDispatchTest, TheWatcherLeavesACallWithinItsDeadlineAlone) {
  Dispatcher dispatcher(catalog_, plugboard::testing::inProcess());
  DeadlineWatch watch;
  std::atomic<int> slow{0};
  Dispatch d = watch.dispatch(
      dispatcher, scripted({{"message", "done"}}), Millis(60'000), slowAfter([&] { ++slow; }, Millis(60'000)));
  EXPECT_EQ(d.outcome.phase, Phase::kSucceeded);
  EXPECT_EQ(d.outcome.message, "done");
  EXPECT_EQ(slow, 0);
}

TEST_F(TimedDispatchTest, TheWatcherCancelsACallPastItsDeadlineAndSaysSo) {
  Dispatcher dispatcher(catalog_, plugboard::testing::inProcess());
  DeadlineWatch watch;
  std::atomic<int> slow{0};
  // Cooperative: the plugin returns as soon as it is cancelled, long before its sleep ends.
  Dispatch d = watch.dispatch(
      dispatcher, scripted({{"sleep_ms", 60'000}}), Millis(30), slowAfter([&] { ++slow; }, Millis(5)));
  EXPECT_EQ(d.outcome.phase, Phase::kFailed);
  EXPECT_EQ(d.outcome.message, "deadline of 30ms passed; the call was cancelled");
  EXPECT_EQ(d.plugin, "scripted@1.0.0");
  EXPECT_EQ(slow, 1);  // told once that the call was slow, before it returned
}

TEST_F(TimedDispatchTest, TheWatcherSaysWhenACallRanLateAndNeverAfterItReturned) {
  Dispatcher dispatcher(catalog_, plugboard::testing::inProcess());
  DeadlineWatch watch;
  std::atomic<int> slow{0}, late{0};
  const CallNotices notices{[&] { ++slow; }, Millis(5), [&] { ++late; }, Millis(40)};
  Dispatch d = watch.dispatch(dispatcher, scripted({{"sleep_ms", 200}}), Millis(60'000), notices);
  EXPECT_EQ(d.outcome.phase, Phase::kSucceeded);
  EXPECT_EQ(slow, 1);
  EXPECT_EQ(late, 1);
  // A call that returns before it is late is not said to be.
  d = watch.dispatch(dispatcher, scripted(Json::object()), Millis(60'000), notices);
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  EXPECT_EQ(late, 1);
}

TEST_F(TimedDispatchTest, TheWatcherFailsACallThatIgnoredItsDeadlineWhenItReturns) {
  Dispatcher dispatcher(catalog_, plugboard::testing::inProcess());
  DeadlineWatch watch;
  // Ignores the cancel and answers Succeeded after 100 ms: the deadline still wins.
  Dispatch d = watch.dispatch(dispatcher, scripted({{"sleep_ms", 100}, {"ignore_cancel", true}}),
                              Millis(20));
  EXPECT_EQ(d.outcome.phase, Phase::kFailed);
  EXPECT_EQ(d.outcome.message, "deadline of 20ms passed; the call was cancelled");
}

TEST_F(TimedDispatchTest, TheWatcherKeepsManyCallsApart) {
  Dispatcher dispatcher(catalog_, plugboard::testing::inProcess());
  DeadlineWatch watch;
  std::vector<std::thread> threads;
  std::atomic<int> cancelled{0}, succeeded{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      const bool late = i % 2 == 0;
      Dispatch d =
          watch.dispatch(dispatcher, scripted(late ? Json{{"sleep_ms", 60'000}} : Json::object()),
                         late ? Millis(20) : Millis(60'000));
      ++(d.outcome.phase == Phase::kSucceeded ? succeeded : cancelled);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(cancelled, 4);
  EXPECT_EQ(succeeded, 4);
}

TEST_F(TimedDispatchTest, AThreadPerCallReturnsTheResultWithinTheDeadline) {
  Dispatcher dispatcher(catalog_, plugboard::testing::inProcess());
  auto r = dispatchWithDeadline(dispatcher, scripted({{"message", "done"}}), Millis(60'000));
  EXPECT_FALSE(r.deadline_passed);
  EXPECT_FALSE(r.abandoned);
  EXPECT_EQ(r.dispatch.outcome.phase, Phase::kSucceeded);
}

TEST_F(TimedDispatchTest, AThreadPerCallCancelsACallPastItsDeadline) {
  Dispatcher dispatcher(catalog_, plugboard::testing::inProcess());
  auto r = dispatchWithDeadline(dispatcher, scripted({{"sleep_ms", 60'000}}), Millis(30),
                                Millis(60'000));
  EXPECT_TRUE(r.deadline_passed);
  EXPECT_FALSE(r.abandoned);  // it stopped when cancelled
  EXPECT_EQ(r.dispatch.outcome.phase, Phase::kFailed);
  EXPECT_EQ(r.dispatch.outcome.message, "deadline of 30ms passed; the call was cancelled");
}

TEST_F(TimedDispatchTest, AThreadPerCallAbandonsACallThatIgnoresTheCancel) {
  // The abandoned call keeps using its dispatcher, which must outlive the process (as the
  // CLI's does): it is never destroyed here.
  auto* dispatcher = new Dispatcher(std::make_shared<const Catalog>(catalog_), nullptr, plugboard::testing::inProcess(), nullptr);
  // Loaded first, and a deadline a loaded machine leaves the call time to start in: a
  // cancel that comes before the plugin is entered stops the call cleanly instead.
  CallControl control;
  ASSERT_EQ(dispatcher->dispatch(scripted({{"message", "loaded"}}), control).outcome.phase,
            Phase::kSucceeded);
  auto r =
      dispatchWithDeadline(*dispatcher, scripted({{"sleep_ms", 600'000}, {"ignore_cancel", true}}),
                           Millis(300), Millis(20));
  EXPECT_TRUE(r.deadline_passed);
  EXPECT_TRUE(r.abandoned);
  EXPECT_EQ(r.dispatch.outcome.phase, Phase::kFailed);
  EXPECT_EQ(r.dispatch.outcome.message,
            "deadline of 300ms passed; the call was cancelled but did not stop, and was abandoned");
}

}  // namespace
}  // namespace plugboard::core

// Deadlines for single calls: TimedCalls, which serve uses (calls on a WorkPool, deadlines
// on a ManualClock here: virtual time), and dispatchWithDeadline, which exec uses.
#include "core/routing/timed_dispatch.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <future>
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

// Starts `request` through `calls`; the future holds its result once done() ran.
std::future<Dispatch> start(TimedCalls& calls, Dispatcher& dispatcher, DispatchRequest request,
                            Millis timeout) {
  auto promise = std::make_shared<std::promise<Dispatch>>();
  auto result = promise->get_future();
  // The dispatcher is the test's: held by a pointer that does not own it.
  calls.dispatch(std::shared_ptr<Dispatcher>(&dispatcher, [](Dispatcher*) {}), std::move(request),
                 timeout, [promise](Dispatch d) { promise->set_value(std::move(d)); });
  return result;
}

TEST_F(TimedDispatchTest, ACallWithinItsDeadlineIsLeftAloneAndItsTimerGoes) {
  Dispatcher dispatcher(catalog_, plugboard::testing::inProcess());
  WorkPool pool(2);
  ManualClock clock;
  TimedCalls calls(pool, clock);
  Dispatch d = start(calls, dispatcher, scripted({{"message", "done"}}), Millis(60'000)).get();
  EXPECT_EQ(d.outcome.phase, Phase::kSucceeded);
  EXPECT_EQ(d.outcome.message, "done");
  EXPECT_FALSE(d.deadline_passed);
  EXPECT_EQ(clock.pending(), 0u);  // its deadline was cancelled
}

TEST_F(TimedDispatchTest, ACallPastItsDeadlineIsCancelledAndSaysSoOnVirtualTime) {
  Dispatcher dispatcher(catalog_, plugboard::testing::inProcess());
  WorkPool pool(2);
  ManualClock clock;
  TimedCalls calls(pool, clock);
  // Cooperative: the plugin returns as soon as it is cancelled, long before its sleep ends.
  auto result = start(calls, dispatcher, scripted({{"sleep_ms", 600'000}}), Millis(30));
  clock.advance(Millis(29));
  EXPECT_EQ(result.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  clock.advance(Millis(1));
  Dispatch d = result.get();
  EXPECT_EQ(d.outcome.phase, Phase::kFailed);
  EXPECT_EQ(d.outcome.message, "deadline of 30ms passed; the call was cancelled");
  EXPECT_TRUE(d.deadline_passed);
}

TEST_F(TimedDispatchTest, ACallThatIgnoresItsDeadlineFailsAndGivesUpItsPlaceInThePool) {
  // The abandoned call keeps using its dispatcher, which must outlive the process: it is
  // never destroyed here.
  auto& dispatcher = *new Dispatcher(std::make_shared<const Catalog>(catalog_), nullptr,
                                     plugboard::testing::inProcess(), nullptr);
  WorkPool pool(1);
  ManualClock clock;
  TimedCalls calls(pool, clock, Millis(2'000));
  CallControl control;  // loaded first, so the cancel finds the call inside the plugin
  ASSERT_EQ(dispatcher.dispatch(scripted(Json::object()), control).outcome.phase,
            Phase::kSucceeded);
  // Ignores the cancel. The deadline is moved only once the call is inside the plugin: a
  // cancel before that ends the call at once, and it never holds the pool's thread.
  const std::string entered = ::testing::TempDir() + "timed_dispatch_entered_" +
                              std::to_string(::getpid());
  std::filesystem::remove(entered);
  auto stuck = start(calls, dispatcher,
                     scripted({{"sleep_ms", 600'000}, {"ignore_cancel", true},
                               {"entered_file", entered}}),
                     Millis(20));
  while (!std::filesystem::exists(entered)) std::this_thread::yield();
  std::filesystem::remove(entered);
  // The pool's one thread is taken: another call waits for it...
  auto next = start(calls, dispatcher, scripted({{"message", "next"}}), Millis(60'000));
  clock.advance(Millis(20));  // the deadline: cancelled, ignored
  EXPECT_EQ(next.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  clock.advance(Millis(2'000));  // and the grace: abandoned, another thread takes its place
  EXPECT_EQ(next.get().outcome.message, "next");
  EXPECT_EQ(pool.threads(), 2);
  // The stuck call still runs; the pool, abandoned, does not wait for it when destroyed.
  EXPECT_EQ(stuck.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
}

TEST_F(TimedDispatchTest, ManyCallsKeepTheirOwnDeadlines) {
  Dispatcher dispatcher(catalog_, plugboard::testing::inProcess());
  WorkPool pool(8);
  ManualClock clock;
  TimedCalls calls(pool, clock);
  std::vector<std::future<Dispatch>> results;
  for (int i = 0; i < 8; ++i) {
    const bool late = i % 2 == 0;
    results.push_back(start(calls, dispatcher,
                            scripted(late ? Json{{"sleep_ms", 600'000}} : Json::object()),
                            late ? Millis(20) : Millis(60'000)));
  }
  clock.advance(Millis(20));
  int cancelled = 0, succeeded = 0;
  for (auto& r : results) ++(r.get().outcome.phase == Phase::kSucceeded ? succeeded : cancelled);
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
  // What the plugin answered when asked to stop is kept.
  EXPECT_EQ(r.dispatch.outcome.message,
            "deadline of 30ms passed; the call was cancelled; it answered: cancelled after call 1");
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

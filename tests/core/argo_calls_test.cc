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

using Reply = ArgoCalls::Reply;

Reply succeeded(const std::string& body) { return {body, true}; }
Reply other(const std::string& body) { return {body, false}; }

// Limits by count only.
ArgoCalls::Limits byCount(std::size_t n) { return {n, std::size_t{1} << 30, std::size_t{1} << 30}; }

// A Run that counts its runs and succeeds with `message`.
ArgoCalls::Run counted(int& runs, const std::string& message = "x") {
  return [&runs, message](bool&) {
    ++runs;
    return succeeded(message);
  };
}

TEST(ArgoCallsTest, ACallIsRunOnceWhileItIsAskedForAgainAndAfterItEnded) {
  ArgoCalls calls(milliseconds(20), std::chrono::minutes(10), byCount(100));
  std::atomic<int> runs{0};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  const ArgoCalls::Run run = [&](bool& answered) {
    ++runs;
    released.wait();
    answered = true;  // its request was answered Running meanwhile
    return succeeded("done");
  };
  // The first request runs the call on its own thread.
  auto first = std::async(std::launch::async, [&] { return calls.execute("body", run, nullptr); });
  while (calls.entries() == 0) std::this_thread::yield();
  // Asked again while it runs: answered at the reply deadline, not started again.
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(calls.execute("body", run, nullptr).has_value());
  // Many at once, as when Argo sends again while a reply is still on its way.
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&] { calls.execute("body", run, nullptr); });
  for (auto& t : threads) t.join();
  release.set_value();
  EXPECT_EQ(first.get()->body, "done");
  // A retry after a lost reply gets the same answer.
  auto again = calls.execute("body", run, nullptr);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->body, "done");
  EXPECT_EQ(runs, 1);
  // Other work (another body) is another call.
  int other_runs = 0;
  auto other = calls.execute("other body", counted(other_runs, "other"), nullptr);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->body, "other");
  EXPECT_EQ(other_runs, 1);
}

TEST(ArgoCallsTest, RequestsWaitingForACallGetItsOutcomeWhenItEndsInTime) {
  ArgoCalls calls(milliseconds(10'000), std::chrono::minutes(10), byCount(100));
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto first = std::async(std::launch::async, [&] {
    return calls.execute(
        "body",
        [&](bool&) {
          released.wait();
          return other("failed");
        },
        nullptr);
  });
  while (calls.entries() == 0) std::this_thread::yield();
  int runs = 0;
  auto waiting =
      std::async(std::launch::async, [&] { return calls.execute("body", counted(runs), nullptr); });
  std::this_thread::sleep_for(milliseconds(100));  // until it waits
  release.set_value();
  EXPECT_EQ(waiting.get()->body, "failed");
  EXPECT_EQ(first.get()->body, "failed");
  // A failure whose request had it is not kept: the next request calls again.
  EXPECT_EQ(calls.execute("body", counted(runs), nullptr)->body, "x");
  EXPECT_EQ(runs, 1);
}

TEST(ArgoCallsTest, AnOutcomeWhoseRequestWasAnsweredEarlyGoesToTheNextRequest) {
  ArgoCalls calls(milliseconds(10'000), std::chrono::minutes(10), byCount(100));
  const auto failed = calls.execute(
      "body",
      [](bool& answered) {
        answered = true;
        return other("failed late");
      },
      nullptr);
  EXPECT_EQ(failed->body, "failed late");
  int runs = 0;
  // The requeued request gets the failure, once; the one after calls again.
  EXPECT_EQ(calls.execute("body", counted(runs), nullptr)->body, "failed late");
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(calls.execute("body", counted(runs), nullptr)->body, "x");
  EXPECT_EQ(runs, 1);
}

TEST(ArgoCallsTest, KeepsAtMostTheConfiguredNumberOfOutcomes) {
  ArgoCalls calls(milliseconds(10'000), std::chrono::minutes(10), byCount(3));
  int runs = 0;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(calls.execute("body " + std::to_string(i), counted(runs), nullptr));
    EXPECT_LE(calls.entries(), 3u);
  }
  EXPECT_EQ(calls.entries(), 3u);
  // The newest are kept; the oldest was dropped and runs again.
  calls.execute("body 9", counted(runs), nullptr);
  EXPECT_EQ(runs, 10);
  calls.execute("body 0", counted(runs), nullptr);
  EXPECT_EQ(runs, 11);
}

TEST(ArgoCallsTest, KeepsAtMostTheConfiguredBytesOfReplies) {
  // 10 replies of 1,000 bytes, at most 3,500 bytes kept: the newest three.
  ArgoCalls calls(milliseconds(10'000), std::chrono::minutes(10), {100, 3'500, 2'000});
  int runs = 0;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(calls.execute("body " + std::to_string(i), counted(runs, std::string(1'000, 'r')),
                              nullptr));
    EXPECT_LE(calls.kept().bytes, 3'500u);
  }
  EXPECT_EQ(calls.kept().count, 3u);
  EXPECT_EQ(calls.kept().bytes, 3'000u);
  calls.execute("body 9", counted(runs), nullptr);
  EXPECT_EQ(runs, 10);  // kept
  calls.execute("body 6", counted(runs), nullptr);
  EXPECT_EQ(runs, 11);  // dropped for the bytes
}

TEST(ArgoCallsTest, AReplyLargerThanTheLargestKeptIsAnsweredAndNotKept) {
  ArgoCalls calls(milliseconds(10'000), std::chrono::minutes(10), {100, 1'000'000, 2'000});
  int runs = 0;
  EXPECT_EQ(calls.execute("big", counted(runs, std::string(2'001, 'r')), nullptr)->body.size(),
            2'001u);
  EXPECT_EQ(calls.kept().count, 0u);
  EXPECT_EQ(calls.kept().bytes, 0u);
  calls.execute("big", counted(runs, std::string(2'001, 'r')), nullptr);
  EXPECT_EQ(runs, 2);  // sent again, it runs again
  calls.execute("small", counted(runs, std::string(2'000, 'r')), nullptr);
  EXPECT_EQ(calls.kept().bytes, 2'000u);
}

TEST(ArgoCallsTest, DropsOutcomesKeptLongerThanConfigured) {
  ArgoCalls calls(milliseconds(10'000), milliseconds(20), byCount(100));
  int runs = 0;
  const ArgoCalls::Run run = counted(runs);
  calls.execute("body", run, nullptr);
  calls.execute("body", run, nullptr);
  EXPECT_EQ(runs, 1);
  std::this_thread::sleep_for(milliseconds(60));
  calls.execute("body", run, nullptr);
  EXPECT_EQ(runs, 2);
}

TEST(ArgoCallsTest, OnlyASuccessIsKeptForRequestsSentAgain) {
  ArgoCalls calls(milliseconds(10'000), std::chrono::minutes(10), byCount(100));
  int runs = 0;
  const ArgoCalls::Run run = [&](bool&) {
    ++runs;
    return other("not a success");
  };
  EXPECT_EQ(calls.execute("body", run, nullptr)->body, "not a success");
  EXPECT_EQ(calls.execute("body", run, nullptr)->body, "not a success");
  EXPECT_EQ(runs, 2);  // the plugin is asked again
  EXPECT_EQ(calls.entries(), 0u);
}

TEST(ArgoCallsTest, KeptGivesASucceededReplyOnlyAndRunsNothing) {
  ArgoCalls calls(milliseconds(20), std::chrono::minutes(10), byCount(100));
  const auto key = ArgoCalls::keyOf("body");
  EXPECT_EQ(key, ArgoCalls::keyOf(std::string("body")));
  EXPECT_NE(key, ArgoCalls::keyOf("body "));
  EXPECT_FALSE(calls.kept(key));
  int runs = 0;
  calls.execute(key, counted(runs, "done"), nullptr);
  EXPECT_EQ(calls.kept(key), "done");
  EXPECT_EQ(calls.kept(ArgoCalls::keyOf("body")), "done");
  EXPECT_EQ(runs, 1);
  // Anything but a success is not kept.
  const ArgoCalls::Run fails = [](bool&) { return other("no"); };
  calls.execute("failed", fails, nullptr);
  EXPECT_FALSE(calls.kept(ArgoCalls::keyOf("failed")));
}

}  // namespace
}  // namespace plugboard::core

// ArgoCalls: a call asked for again while it runs, or after it ended, is not run again.
// On virtual time (ManualClock): reply deadlines pass when the test says so.
#include "core/serving/argo_calls.h"

#include <optional>
#include <string>

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

using std::chrono::milliseconds;

using Reply = ArgoCalls::Reply;

Reply succeeded(const std::string& body) { return {body, true}; }
Reply other(const std::string& body) { return {body, false}; }

// Limits by count only.
ArgoCalls::Limits byCount(std::size_t n) { return {n, std::size_t{1} << 30, std::size_t{1} << 30}; }

// A Run that ends at once with `reply`, counting its runs.
ArgoCalls::Run endsWith(int& runs, Reply reply) {
  return [&runs, reply](ArgoCalls::Finish finish) {
    ++runs;
    finish(reply);
  };
}
ArgoCalls::Run counted(int& runs, const std::string& message = "x") {
  return endsWith(runs, succeeded(message));
}

// A call that runs until the test ends it.
struct Held {
  int runs = 0;
  ArgoCalls::Finish finish;
  ArgoCalls::Run run() {
    return [this](ArgoCalls::Finish f) {
      ++runs;
      finish = std::move(f);
    };
  }
};

// One request's answer: empty until given; then the reply, or nullopt (Running).
struct Asked {
  std::optional<std::optional<Reply>> answer;
  ArgoCalls::Answer take() {
    return [this](std::optional<Reply> r) {
      EXPECT_FALSE(answer.has_value()) << "answered twice";
      answer = std::move(r);
    };
  }
  bool running() const { return answer.has_value() && !answer->has_value(); }
  std::string body() const { return answer && *answer ? (*answer)->body : "(no reply)"; }
};

// The answer of a request answered within execute().
std::optional<Reply> ask(ArgoCalls& calls, std::string_view body, const ArgoCalls::Run& run) {
  Asked asked;
  calls.execute(body, run, asked.take());
  EXPECT_TRUE(asked.answer.has_value()) << "not answered at once";
  return asked.answer ? *asked.answer : std::nullopt;
}

TEST(ArgoCallsTest, ACallIsRunOnceWhileItIsAskedForAgainAndAfterItEnded) {
  ManualClock clock;
  ArgoCalls calls(clock, milliseconds(20), std::chrono::minutes(10), byCount(100));
  Held call;
  Asked first;
  calls.execute("body", call.run(), first.take());
  EXPECT_FALSE(first.answer.has_value());
  // Asked again while it runs: answered at the reply deadline, not started again.
  Asked again[3];
  for (auto& a : again) calls.execute("body", call.run(), a.take());
  clock.advance(milliseconds(19));
  EXPECT_FALSE(first.answer.has_value());
  clock.advance(milliseconds(1));
  EXPECT_TRUE(first.running());
  for (auto& a : again) EXPECT_TRUE(a.running());
  call.finish(succeeded("done"));
  // A retry after a lost reply gets the same answer.
  int runs = 0;
  EXPECT_EQ(ask(calls, "body", counted(runs))->body, "done");
  EXPECT_EQ(call.runs, 1);
  EXPECT_EQ(runs, 0);
  // Other work (another body) is another call.
  EXPECT_EQ(ask(calls, "other body", counted(runs, "other"))->body, "other");
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(clock.pending(), 0u);  // no reply deadline is left behind
}

TEST(ArgoCallsTest, RequestsWaitingForACallGetItsOutcomeWhenItEndsInTime) {
  ManualClock clock;
  ArgoCalls calls(clock, milliseconds(10'000), std::chrono::minutes(10), byCount(100));
  Held call;
  Asked first, waiting;
  calls.execute("body", call.run(), first.take());
  clock.advance(milliseconds(5'000));
  calls.execute("body", call.run(), waiting.take());
  clock.advance(milliseconds(9'999));  // past the first's reply deadline, not the second's
  EXPECT_TRUE(first.running());
  EXPECT_FALSE(waiting.answer.has_value());
  call.finish(other("failed"));
  EXPECT_EQ(waiting.body(), "failed");
  // A failure a request had is not kept: the next request calls again.
  int runs = 0;
  EXPECT_EQ(ask(calls, "body", counted(runs))->body, "x");
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(call.runs, 1);
}

TEST(ArgoCallsTest, AnOutcomeWhoseRequestWasAnsweredEarlyGoesToTheNextRequest) {
  ManualClock clock;
  ArgoCalls calls(clock, milliseconds(10'000), std::chrono::minutes(10), byCount(100));
  Held call;
  Asked first;
  calls.execute("body", call.run(), first.take());
  clock.advance(milliseconds(10'000));
  EXPECT_TRUE(first.running());
  call.finish(other("failed late"));
  int runs = 0;
  // The requeued request gets the failure, once; the one after calls again.
  EXPECT_EQ(ask(calls, "body", counted(runs))->body, "failed late");
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(ask(calls, "body", counted(runs))->body, "x");
  EXPECT_EQ(runs, 1);
}

TEST(ArgoCallsTest, KeepsAtMostTheConfiguredNumberOfOutcomes) {
  ManualClock clock;
  ArgoCalls calls(clock, milliseconds(10'000), std::chrono::minutes(10), byCount(3));
  int runs = 0;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(ask(calls, "body " + std::to_string(i), counted(runs)));
    EXPECT_LE(calls.entries(), 3u);
  }
  EXPECT_EQ(calls.entries(), 3u);
  // The newest are kept; the oldest was dropped and runs again.
  ask(calls, "body 9", counted(runs));
  EXPECT_EQ(runs, 10);
  ask(calls, "body 0", counted(runs));
  EXPECT_EQ(runs, 11);
}

TEST(ArgoCallsTest, KeepsAtMostTheConfiguredBytesOfReplies) {
  // 10 replies of 1,000 bytes, at most 3,500 bytes kept: the newest three.
  ManualClock clock;
  ArgoCalls calls(clock, milliseconds(10'000), std::chrono::minutes(10), {100, 3'500, 2'000});
  int runs = 0;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(ask(calls, "body " + std::to_string(i), counted(runs, std::string(1'000, 'r'))));
    EXPECT_LE(calls.kept().bytes, 3'500u);
  }
  EXPECT_EQ(calls.kept().count, 3u);
  EXPECT_EQ(calls.kept().bytes, 3'000u);
  ask(calls, "body 9", counted(runs));
  EXPECT_EQ(runs, 10);  // kept
  ask(calls, "body 6", counted(runs));
  EXPECT_EQ(runs, 11);  // dropped for the bytes
}

TEST(ArgoCallsTest, AReplyLargerThanTheLargestKeptIsAnsweredAndNotKept) {
  ManualClock clock;
  ArgoCalls calls(clock, milliseconds(10'000), std::chrono::minutes(10), {100, 1'000'000, 2'000});
  int runs = 0;
  EXPECT_EQ(ask(calls, "big", counted(runs, std::string(2'001, 'r')))->body.size(),
            2'001u);
  EXPECT_EQ(calls.kept().count, 0u);
  EXPECT_EQ(calls.kept().bytes, 0u);
  ask(calls, "big", counted(runs, std::string(2'001, 'r')));
  EXPECT_EQ(runs, 2);  // sent again, it runs again
  ask(calls, "small", counted(runs, std::string(2'000, 'r')));
  EXPECT_EQ(calls.kept().bytes, 2'000u);
}

TEST(ArgoCallsTest, DropsOutcomesKeptLongerThanConfigured) {
  ManualClock clock;
  ArgoCalls calls(clock, milliseconds(10'000), milliseconds(20), byCount(100));
  int runs = 0;
  const ArgoCalls::Run run = counted(runs);
  ask(calls, "body", run);
  ask(calls, "body", run);
  EXPECT_EQ(runs, 1);
  clock.advance(milliseconds(20));
  ask(calls, "body", run);
  EXPECT_EQ(runs, 2);
}

TEST(ArgoCallsTest, OnlyASuccessIsKeptForRequestsSentAgain) {
  ManualClock clock;
  ArgoCalls calls(clock, milliseconds(10'000), std::chrono::minutes(10), byCount(100));
  int runs = 0;
  const ArgoCalls::Run run = endsWith(runs, other("not a success"));
  EXPECT_EQ(ask(calls, "body", run)->body, "not a success");
  EXPECT_EQ(ask(calls, "body", run)->body, "not a success");
  EXPECT_EQ(runs, 2);  // the plugin is asked again
  EXPECT_EQ(calls.entries(), 0u);
}

TEST(ArgoCallsTest, KeptGivesASucceededReplyOnlyAndRunsNothing) {
  ManualClock clock;
  ArgoCalls calls(clock, milliseconds(20), std::chrono::minutes(10), byCount(100));
  const auto key = ArgoCalls::keyOf("body");
  EXPECT_EQ(key, ArgoCalls::keyOf(std::string("body")));
  EXPECT_NE(key, ArgoCalls::keyOf("body "));
  EXPECT_FALSE(calls.kept(key));
  int runs = 0;
  ask(calls, "body", counted(runs, "done"));
  EXPECT_EQ(calls.kept(key), "done");
  EXPECT_EQ(calls.kept(ArgoCalls::keyOf("body")), "done");
  EXPECT_EQ(runs, 1);
  // Anything but a success is not kept.
  const ArgoCalls::Run fails = endsWith(runs, other("no"));
  ask(calls, "failed", fails);
  EXPECT_FALSE(calls.kept(ArgoCalls::keyOf("failed")));
}

}  // namespace
}  // namespace plugboard::core

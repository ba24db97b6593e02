// What serve's accept loop does after a failed accept, and how many connections it serves:
// core/serving/accept_limits.h, with a clock of the test's own.
#include "core/serving/accept_limits.h"

#include <cerrno>
#include <string>

#include <gtest/gtest.h>

#include "core/base/defaults.h"

namespace plugboard::core {
namespace {

using Clock = AcceptBackoff::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(AcceptBackoffTest, PausesOnRunningOutOfDescriptorsLongerWhileItGoesOn) {
  AcceptBackoff b;
  Clock::time_point now{};
  std::vector<long long> pauses;
  for (int i = 0; i < 8; ++i) {
    pauses.push_back(b.failed(EMFILE, "Too many open files", now).pause.count());
    now += b.failed(ENFILE, "Too many open files in system", now).pause;
  }
  // 100 ms, doubling, at most 1.6 s: each call above is one failed accept.
  EXPECT_EQ(pauses, (std::vector<long long>{100, 400, 1600, 1600, 1600, 1600, 1600, 1600}));
  for (int error : {ENOBUFS, ENOMEM, EBADF}) {
    AcceptBackoff fresh;
    EXPECT_EQ(fresh.failed(error, "x", now).pause, AcceptBackoff::kFirstPause) << error;
  }
}

TEST(AcceptBackoffTest, RetriesAtOnceAfterOneConnectionsError) {
  AcceptBackoff b;
  for (int error : {ECONNABORTED, EPROTO, EPERM, EINTR, EAGAIN}) {
    EXPECT_EQ(b.failed(error, "x", Clock::time_point{}).pause, milliseconds(0)) << error;
  }
  EXPECT_FALSE(b.accepted(Clock::time_point{}));  // nothing was paused
}

TEST(AcceptBackoffTest, LogsTheStartThenOneLinePerPeriodWithTheCountThenTheEnd) {
  AcceptBackoff b;
  const Clock::time_point start{};
  auto first = b.failed(EMFILE, "Too many open files (the limit is 64)", start);
  ASSERT_TRUE(first.log);
  EXPECT_EQ(*first.log,
            "accept failed: Too many open files (the limit is 64); not accepting for 100ms, "
            "longer while it goes on (up to 1.6s)");
  // A thousand more failures within the period: no line.
  for (int i = 1; i <= 1000; ++i) {
    EXPECT_FALSE(b.failed(EMFILE, "Too many open files", start + milliseconds(i * 9)).log);
  }
  auto later = b.failed(EMFILE, "Too many open files", start + seconds(10));
  ASSERT_TRUE(later.log);
  EXPECT_EQ(*later.log,
            "accept still failing: 1001 times since the last report (Too many open files); "
            "paused 10.0s in all, 1.6s at a time");
  auto end = b.accepted(start + seconds(12));
  ASSERT_TRUE(end);
  EXPECT_EQ(*end, "accepting again after 12.0s (1002 failed accepts meanwhile)");
  EXPECT_FALSE(b.accepted(start + seconds(13)));
  // The next run of failures pauses from the first pause again, and is logged once the
  // period since the last line has passed.
  auto again = b.failed(EMFILE, "Too many open files", start + seconds(14));
  EXPECT_FALSE(again.log);
  EXPECT_EQ(again.pause, AcceptBackoff::kFirstPause);
  EXPECT_FALSE(b.accepted(start + seconds(15)));  // its start was not told
  EXPECT_EQ(b.failed(EMFILE, "Too many open files", start + seconds(21)).log,
            "accept failed: Too many open files; not accepting for 100ms, longer while it goes "
            "on (up to 1.6s); 1 more failed since the last report");
}

TEST(AcceptBackoffTest, FailuresThatComeAndGoInQuickTurnsLogTwoLinesPerPeriodAtMost) {
  // At the connection limit with few descriptors to spare: each accept works, the next
  // meets the limit again.
  AcceptBackoff b;
  Clock::time_point now{};
  int lines = 0;
  for (int i = 0; i < 400; ++i) {  // 60 s
    lines += b.failed(EMFILE, "Too many open files", now).log.has_value();
    now += milliseconds(150);
    lines += b.accepted(now).has_value();
  }
  EXPECT_LE(lines, 2 * 6 + 2);
  EXPECT_GE(lines, 2);
}

TEST(AcceptBackoffTest, OneConnectionsErrorsAreLoggedAtMostOncePerPeriod) {
  AcceptBackoff b;
  const Clock::time_point start{};
  EXPECT_EQ(b.failed(ECONNABORTED, "Software caused connection abort", start).log,
            "accept failed: Software caused connection abort");
  for (int i = 1; i < 100; ++i)
    EXPECT_FALSE(b.failed(ECONNABORTED, "x", start + seconds(i) / 20).log);
  EXPECT_EQ(b.failed(EPROTO, "Protocol error", start + seconds(11)).log,
            "accept failed 100 times since the last report, lately: Protocol error");
}

TEST(ConnectionLimitTest, IsTheConfiguredOneOrHalfTheDescriptorLimitUpToACap) {
  EXPECT_EQ(connectionLimit(5, {64, 64, 64}), 5u);
  EXPECT_EQ(connectionLimit(100000, {64, 64, 64}), 100000u);  // as configured, even so
  EXPECT_EQ(connectionLimit(0, {64, 64, 64}), 32u);
  EXPECT_EQ(connectionLimit(0, {1024, 1048576, 1048576}), defaults::kAutoMaxConnections);
  EXPECT_EQ(connectionLimit(0, {1, 1, 1}), 1u);
}

TEST(DescriptorLimitTest, RaisingMakesTheSoftLimitTheHardOne) {
  const DescriptorLimit raised = raiseDescriptorLimit();
  EXPECT_EQ(raised.soft, raised.hard);
  EXPECT_EQ(descriptorLimit().soft, raised.hard);
}

}  // namespace
}  // namespace plugboard::core

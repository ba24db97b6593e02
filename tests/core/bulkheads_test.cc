// Bulkheads: each plugin's calls in flight and queued are bounded on their own, and a call
// over both is refused at once, one that waited too long in the queue then.
#include "core/serving/bulkheads.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

using std::chrono::milliseconds;

// Records what happened to each call by its number: "started" or the refusal.
struct Calls {
  std::vector<std::string> seen = std::vector<std::string>(16);
  void enter(Bulkheads& b, const std::string& plugin, int n) {
    b.enter(
        plugin, [this, n] { seen[n] = "started"; },
        [this, n](std::string message) { seen[n] = "refused: " + message; });
  }
};

TEST(BulkheadsTest, APluginsCallsBeyondItsBoundsWaitThenAreRefusedAndOthersRunMeanwhile) {
  ManualClock clock;
  Bulkheads b(clock, {2, 1}, {}, milliseconds(100));
  Calls c;
  for (int n = 0; n < 4; ++n) c.enter(b, "bad@1.0.0", n);
  EXPECT_EQ(c.seen[0], "started");
  EXPECT_EQ(c.seen[1], "started");
  EXPECT_EQ(c.seen[2], "");  // queued
  EXPECT_EQ(c.seen[3],
            "refused: plugin 'bad@1.0.0' has 2 calls in flight and 1 waiting, its bounds "
            "(plugin_calls, plugin_queue); the call was refused, try again later");
  // Another plugin is not behind them.
  c.enter(b, "hello@1.2.0", 4);
  EXPECT_EQ(c.seen[4], "started");
  clock.advance(milliseconds(100));
  EXPECT_EQ(c.seen[2],
            "refused: plugin 'bad@1.0.0' kept its 2 calls in flight (its bound, plugin_calls) "
            "for 100ms while this call waited in its queue; the call was not started, try "
            "again later");
  const auto counts = b.countsOf("bad@1.0.0");
  EXPECT_EQ(counts.in_flight, 2);
  EXPECT_EQ(counts.queued, 0);
  EXPECT_EQ(counts.refused_full, 1u);
  EXPECT_EQ(counts.refused_waited, 1u);
}

TEST(BulkheadsTest, ACallThatEndsGivesItsPlaceToTheCallThatWaitedLongest) {
  ManualClock clock;
  Bulkheads b(clock, {1, 2}, {}, milliseconds(100));
  Calls c;
  for (int n = 0; n < 3; ++n) c.enter(b, "p@1", n);
  b.leave("p@1");
  EXPECT_EQ(c.seen[1], "started");
  EXPECT_EQ(c.seen[2], "");
  clock.advance(milliseconds(100));  // its timer finds it started: nothing happens to it
  EXPECT_EQ(c.seen[1], "started");
  EXPECT_EQ(c.seen[2].substr(0, 8), "refused:");
  b.leave("p@1");
  EXPECT_EQ(b.countsOf("p@1").in_flight, 0);
}

TEST(BulkheadsTest, LimitsByNameOverrideTheDefaultsForEveryVersion) {
  ManualClock clock;
  Bulkheads b(clock, {16, 64}, {{"slow", {2, -1}}}, milliseconds(100));
  EXPECT_EQ(b.limitsOf("Slow@1.0.0").calls, 2);
  EXPECT_EQ(b.limitsOf("slow@2.0.0").queue, 64);  // not overridden: the default
  EXPECT_EQ(b.limitsOf("hello@1.2.0").calls, 16);
}

}  // namespace
}  // namespace plugboard::core

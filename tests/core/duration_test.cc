#include "core/duration.h"

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

long long ms(const char* text) {
  auto d = parseDuration(text);
  EXPECT_TRUE(d.ok()) << text;
  return d.ok() ? d->count() : -1;
}

TEST(DurationTest, ParsesUnitsAndSequences) {
  EXPECT_EQ(ms("250ms"), 250);
  EXPECT_EQ(ms("30s"), 30'000);
  EXPECT_EQ(ms("1.5s"), 1'500);
  EXPECT_EQ(ms("2m"), 120'000);
  EXPECT_EQ(ms("1h"), 3'600'000);
  EXPECT_EQ(ms("1m30s"), 90'000);
  EXPECT_EQ(ms("45"), 45'000);
}

TEST(DurationTest, RejectsWhatIsNotADuration) {
  for (const char* bad : {"", "s", "10x", "1 s", "-5s", "1.2.3s", "5s10"}) {
    auto d = parseDuration(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_NE(d.error().message().find("invalid duration"), std::string::npos);
  }
}

TEST(DurationTest, FormatsAsGoDoes) {
  EXPECT_EQ(formatGoDuration(Millis(0)), "0s");
  EXPECT_EQ(formatGoDuration(Millis(250)), "250ms");
  EXPECT_EQ(formatGoDuration(Millis(1500)), "1.5s");
  EXPECT_EQ(formatGoDuration(Millis(90'000)), "1m30s");
  EXPECT_EQ(formatGoDuration(Millis(3'600'000)), "1h0m0s");
}

TEST(DurationTest, FormatsAsUsersWriteAndReadsItBack) {
  EXPECT_EQ(formatDuration(Millis(0)), "0s");
  EXPECT_EQ(formatDuration(Millis(250)), "250ms");
  EXPECT_EQ(formatDuration(Millis(1000)), "1s");
  EXPECT_EQ(formatDuration(Millis(1500)), "1s500ms");
  EXPECT_EQ(formatDuration(Millis(60'000)), "1m");
  EXPECT_EQ(formatDuration(Millis(90'000)), "1m30s");
  EXPECT_EQ(formatDuration(Millis(300'000)), "5m");
  EXPECT_EQ(formatDuration(Millis(3'600'000)), "1h");
  for (long long v : {250LL, 1500LL, 90'000LL, 3'723'004LL}) {
    EXPECT_EQ(ms(formatDuration(Millis(v)).c_str()), v);
  }
}

}  // namespace
}  // namespace plugboard::core

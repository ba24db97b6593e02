#include "core/base/duration.h"

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

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
    auto back = parseDuration(formatDuration(Millis(v)));
    ASSERT_TRUE(back.ok()) << v;
    EXPECT_EQ(back->count(), v);
  }
}

}  // namespace
}  // namespace plugboard::core

#include "plugboard/host/options.h"

#include <gtest/gtest.h>

namespace plugboard::host {
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

TEST(DurationTest, ReadsBackWhatItWrites) {
  for (long long n : {0LL, 250LL, 1'500LL, 90'000LL, 3'723'004LL}) {
    EXPECT_EQ(ms(formatGoDuration(Millis(n)).c_str()), n);
  }
}

std::uint64_t bytes(const char* text) {
  auto n = parseSize(text);
  EXPECT_TRUE(n.ok()) << text << ": " << (n.ok() ? "" : n.error().message());
  return n.ok() ? *n : 0;
}

TEST(SizeTest, ParsesBytesAndBinaryMultiplesInAnyCase) {
  EXPECT_EQ(bytes("0"), 0u);
  EXPECT_EQ(bytes("4096"), 4096u);
  EXPECT_EQ(bytes("4096b"), 4096u);
  EXPECT_EQ(bytes("512k"), 512u << 10);
  EXPECT_EQ(bytes("512KB"), 512u << 10);
  EXPECT_EQ(bytes("256M"), 256u << 20);
  EXPECT_EQ(bytes("256mib"), 256u << 20);
  EXPECT_EQ(bytes("1GiB"), 1ull << 30);
  EXPECT_EQ(bytes("2t"), 2ull << 40);
  EXPECT_EQ(bytes("18446744073709551615"), UINT64_MAX);
}

TEST(SizeTest, RejectsWhatIsNotASize) {
  for (const char* bad :
       {"", "M", "-1", "1.5G", "12 M", "1x", "1Mi", "1kbb", "18446744073709551616", "16777216T"}) {
    auto n = parseSize(bad);
    ASSERT_FALSE(n.ok()) << bad;
    EXPECT_NE(n.error().message().find("invalid size '" + std::string(bad) + "'"),
              std::string::npos)
        << n.error().message();
  }
}

TEST(SizeTest, TakesAnOptionsJsonNumberOrString) {
  EXPECT_EQ(*parseSizeValue(nlohmann::json(4096)), 4096u);
  EXPECT_EQ(*parseSizeValue(nlohmann::json("1K")), 1024u);
  EXPECT_FALSE(parseSizeValue(nlohmann::json(-1)).ok());
  EXPECT_FALSE(parseSizeValue(nlohmann::json(1.5)).ok());
  EXPECT_FALSE(parseSizeValue(nlohmann::json::array()).ok());
}

// A deadline made from a longer duration would overflow the clock's nanoseconds, and a
// number of hundreds of digits used to come back as a negative duration.
TEST(DurationTest, RefusesDurationsBeyondAHundredYears) {
  EXPECT_EQ(ms("876000h"), kMaxDuration.count());
  for (const std::string bad : {std::string("876001h"), std::string(400, '9') + "s",
                                std::string("9223372036854775807s")}) {
    auto d = parseDuration(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.error().message(), "invalid duration '" + bad + "': longer than 100 years");
  }
  EXPECT_EQ(durationFromSeconds(90)->count(), 90'000);
  EXPECT_EQ(durationFromSeconds(kMaxDuration.count() / 1000)->count(), kMaxDuration.count());
  EXPECT_EQ(durationFromSeconds(9223372036854775807).error().message(),
            "invalid duration '9223372036854775807': longer than 100 years");
  EXPECT_EQ(durationFromSeconds(-1).error().message(), "invalid duration -1: negative");
}

}  // namespace
}  // namespace plugboard::host

#include "core/manifests/version.h"

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

Version v(const char* text) {
  auto parsed = Version::parse(text);
  EXPECT_TRUE(parsed.ok()) << text;
  return *parsed;
}

TEST(VersionTest, OrdersNumericallyNotLexically) {
  EXPECT_LT(v("1.2.0"), v("1.10.0"));
  EXPECT_LT(v("1.9.9"), v("2.0.0"));
  EXPECT_EQ(v("1.2.3"), v("1.2.3+build.7"));
}

TEST(VersionTest, PreReleaseSortsBeforeRelease) {
  EXPECT_LT(v("2.0.0-rc.1"), v("2.0.0"));
  EXPECT_LT(v("2.0.0-alpha"), v("2.0.0-alpha.1"));
  EXPECT_LT(v("2.0.0-rc.2"), v("2.0.0-rc.10"));
  EXPECT_LT(v("2.0.0-1"), v("2.0.0-alpha"));
}

TEST(VersionTest, RejectsMalformedVersionsWithAHint) {
  for (const char* bad : {"", "1", "1.2", "1.2.x", "01.2.3", "1.2.3-", "1..3"}) {
    auto parsed = Version::parse(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.error().message().find("MAJOR.MINOR.PATCH"), std::string::npos);
  }
}

TEST(VersionTest, MatchesPrefixes) {
  EXPECT_TRUE(v("1.2.3").matchesPrefix("1"));
  EXPECT_TRUE(v("1.2.3").matchesPrefix("1.2"));
  EXPECT_TRUE(v("1.2.3").matchesPrefix("1.2.3"));
  EXPECT_FALSE(v("1.2.3").matchesPrefix("1.3"));
  EXPECT_FALSE(v("11.2.3").matchesPrefix("1"));
  EXPECT_FALSE(v("1.2.3-rc.1").matchesPrefix("1.2.3"));
  EXPECT_TRUE(v("1.2.3-rc.1").matchesPrefix("1.2.3-rc.1"));
}

}  // namespace
}  // namespace plugboard::core

#include "plugboard/host/json_text.h"

#include <gtest/gtest.h>

#include "tests/support/deep_json.h"

namespace plugboard::host {
namespace {

using plugboard::testing::nestedArrays;

TEST(JsonTextTest, CountsArraysAndObjectsUpToTheLimit) {
  EXPECT_FALSE(jsonDeeperThan(nestedArrays(kMaxJsonDepth)));
  EXPECT_TRUE(jsonDeeperThan(nestedArrays(kMaxJsonDepth + 1)));
  EXPECT_FALSE(jsonDeeperThan(R"({"a":[{"b":[]}],"c":{}})", 4));
  EXPECT_TRUE(jsonDeeperThan(R"({"a":[{"b":[]}],"c":{}})", 3));
  EXPECT_FALSE(jsonDeeperThan("", 0));
  EXPECT_FALSE(jsonDeeperThan("17", 0));
  EXPECT_TRUE(jsonDeeperThan("{}", 0));
}

TEST(JsonTextTest, BracketsInStringsDoNotCount) {
  EXPECT_FALSE(jsonDeeperThan(R"(["[[[[", "{{{{", "\"[[[", "\\"])", 1));
  EXPECT_TRUE(jsonDeeperThan(R"(["\\", [[]]])", 2));  // the string ends after its backslash
  EXPECT_EQ(tooDeepText(3), "nested deeper than 3 levels");
}

TEST(JsonTextTest, FindsNulBytes) {
  using namespace std::string_view_literals;
  EXPECT_TRUE(holdsNul("{}\0x"sv));
  EXPECT_FALSE(holdsNul(R"({"a":"\u0000"})"));
}

}  // namespace
}  // namespace plugboard::host

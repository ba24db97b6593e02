#include "plugboard/host/json_depth.h"

#include <gtest/gtest.h>

#include "tests/support/deep_json.h"

namespace plugboard::host {
namespace {

using plugboard::testing::nestedArrays;

TEST(JsonDepthTest, CountsArraysAndObjectsUpToTheLimit) {
  EXPECT_FALSE(jsonDeeperThan(nestedArrays(kMaxJsonDepth)));
  EXPECT_TRUE(jsonDeeperThan(nestedArrays(kMaxJsonDepth + 1)));
  EXPECT_FALSE(jsonDeeperThan(R"({"a":[{"b":[]}],"c":{}})", 4));
  EXPECT_TRUE(jsonDeeperThan(R"({"a":[{"b":[]}],"c":{}})", 3));
  EXPECT_FALSE(jsonDeeperThan("", 0));
  EXPECT_FALSE(jsonDeeperThan("17", 0));
  EXPECT_TRUE(jsonDeeperThan("{}", 0));
}

TEST(JsonDepthTest, BracketsInStringsDoNotCount) {
  EXPECT_FALSE(jsonDeeperThan(R"(["[[[[", "{{{{", "\"[[[", "\\"])", 1));
  EXPECT_TRUE(jsonDeeperThan(R"(["\\", [[]]])", 2));  // the string ends after its backslash
  EXPECT_EQ(tooDeepText(3), "nested deeper than 3 levels");
}

}  // namespace
}  // namespace plugboard::host

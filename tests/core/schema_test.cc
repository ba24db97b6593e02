#include "core/workflows/schema.h"

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

const Json kSchema = Json::parse(R"({
  "type": "object", "required": ["name"], "additionalProperties": false,
  "properties": {
    "name": {"type": "string", "minLength": 1, "pattern": "^[a-z]+$"},
    "count": {"type": "integer", "minimum": 1, "maximum": 10},
    "mode": {"enum": ["fast", "slow"]},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}
  }})");

TEST(SchemaTest, AcceptsAValidValue) {
  EXPECT_TRUE(checkSchema(Json::parse(R"({"name":"ada","count":3,"mode":"fast","tags":["a"]})"),
                          kSchema, "args")
                  .empty());
}

TEST(SchemaTest, ReportsEachViolationWithItsPath) {
  auto problems = checkSchema(
      Json::parse(R"({"count":0,"mode":"medium","tags":["a",2,"c"],"extra":true})"), kSchema, "args");
  const std::vector<std::string> expected = {
      "args: missing required member 'name'",
      "args.count: must be at least 1, got 0",
      "args: unknown member 'extra'",
      "args.mode: must be one of [\"fast\",\"slow\"], got \"medium\"",
      "args.tags: must have at most 2 items",
      "args.tags[1]: expected string, got integer",
  };
  for (const auto& e : expected) {
    EXPECT_NE(std::find(problems.begin(), problems.end(), e), problems.end()) << e;
  }
  EXPECT_EQ(problems.size(), expected.size());
}

TEST(SchemaTest, TypeMismatchAndPattern) {
  EXPECT_EQ(checkSchema(Json(5), Json::parse(R"({"type":"string"})"), "args"),
            std::vector<std::string>{"args: expected string, got integer"});
  EXPECT_EQ(checkSchema(Json("ABC"), kSchema["properties"]["name"], "args.name"),
            std::vector<std::string>{"args.name: does not match the pattern \"^[a-z]+$\""});
  EXPECT_TRUE(checkSchema(Json(2.0), Json::parse(R"({"type":"integer"})"), "x").empty());
  EXPECT_TRUE(checkSchema(Json(2), Json::parse(R"({"type":["string","number"]})"), "x").empty());
}

TEST(SchemaTest, IfChoosesThenOrElseAndAllOfChecksEach) {
  // A tagged union: the member "kind" chooses which other members are checked.
  const Json tagged = Json::parse(R"({"type":"object","allOf":[
    {"if":{"properties":{"kind":{"const":"a"}},"required":["kind"]},
     "then":{"required":["x"],"properties":{"x":{"type":"integer"}}},
     "else":{"required":["y"]}}]})");
  EXPECT_TRUE(checkSchema(Json::parse(R"({"kind":"a","x":1})"), tagged, "v").empty());
  EXPECT_EQ(checkSchema(Json::parse(R"({"kind":"a","x":"no"})"), tagged, "v"),
            std::vector<std::string>{"v.x: expected integer, got string"});
  EXPECT_EQ(checkSchema(Json::parse(R"({"kind":"b"})"), tagged, "v"),
            std::vector<std::string>{"v: missing required member 'y'"});
  // A condition on a value not known yet chooses neither branch.
  auto unknown = [](const Json& v) { return v.is_string() && v.get<std::string>() == "?"; };
  EXPECT_TRUE(checkSchema(Json::parse(R"({"kind":"?"})"), tagged, "v", unknown).empty());
}

TEST(SchemaTest, UnknownValuesPass) {
  auto unknown = [](const Json& v) { return v.is_string() && v.get<std::string>() == "?"; };
  EXPECT_TRUE(checkSchema(Json::parse(R"({"name":"?","count":"?"})"), kSchema, "args", unknown).empty());
}

// A whole number too large for an integer type is still an integer (converting it to one
// was undefined behaviour, found by fuzz/schema.cc).
TEST(SchemaTest, HugeWholeNumbersAreIntegers) {
  const Json integer = {{"type", "integer"}};
  EXPECT_TRUE(checkSchema(Json::parse("1e300"), integer, "args").empty());
  EXPECT_TRUE(checkSchema(Json::parse("-1e300"), integer, "args").empty());
  EXPECT_TRUE(checkSchema(Json::parse("2.0"), integer, "args").empty());
  EXPECT_EQ(checkSchema(Json::parse("2.5"), integer, "args"),
            std::vector<std::string>{"args: expected integer, got number"});
}

// Patterns come from plugin files and values from workflow files and other plugins'
// outputs: neither may make a check take long or break the stack (std::regex did both).
TEST(SchemaTest, PatternsTakeLinearTimeAndNoStack) {
  const Json schema = {{"pattern", "(a|b|(c|(d|e)))*x"}};
  EXPECT_EQ(checkSchema(std::string(200'000, 'a'), schema, "args"),
            std::vector<std::string>{"args: does not match the pattern \"(a|b|(c|(d|e)))*x\""});
  EXPECT_TRUE(checkSchema(std::string(200'000, 'a') + "x", schema, "args").empty());
  EXPECT_TRUE(checkSchema(std::string(30, 'a'), {{"pattern", "^(a*)*b$"}}, "args").size() == 1);
  // Patterns RE2 cannot compile are ignored, as invalid ones always were.
  EXPECT_TRUE(checkSchema("x", {{"pattern", "(?=y)"}}, "args").empty());
  EXPECT_TRUE(checkSchema("x", {{"pattern", "(["}}, "args").empty());
}

}  // namespace
}  // namespace plugboard::core

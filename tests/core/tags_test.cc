#include "core/workflows/tags.h"

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

const Json& root() {
  static const Json r = Json::parse(R"({
    "inputs": {"parameters": {"who": "Ada", "n": 3, "num-1": "7"}},
    "workflow": {"name": "wf-1", "parameters": {"list": "[1, 2]"}},
    "item": {"key": "a", "value": 1.5},
    "tasks": {"A": {"outputs": {"result": "heads"}}}
  })");
  return r;
}

TEST(TagsTest, FindsTagsAndTellsExpressionsApart) {
  auto tags = findTags("a {{ inputs.parameters.who }} b {{=asInt(x) + 1}}{{item}}");
  ASSERT_TRUE(tags.ok()) << tags.error().message();
  ASSERT_EQ(tags->size(), 3u);
  EXPECT_FALSE((*tags)[0].expression);
  EXPECT_EQ((*tags)[0].text, "inputs.parameters.who");
  EXPECT_EQ((*tags)[0].offset, 2u);
  EXPECT_TRUE((*tags)[1].expression);
  EXPECT_EQ((*tags)[1].text, "asInt(x) + 1");
  EXPECT_EQ((*tags)[2].text, "item");
  EXPECT_TRUE(findTags("no tags here { }").value().empty());
}

TEST(TagsTest, AnOpenTagWithoutItsEndIsAnError) {
  auto tags = findTags("echo {{inputs.parameters.who");
  ASSERT_FALSE(tags.ok());
  EXPECT_EQ(tags.error().message(),
            "'{{' without '}}' at 6 in \"echo {{inputs.parameters.who\"");
}

TEST(TagsTest, SplicesTagsIntoText) {
  JsonScope scope(root());
  auto out = fillText("hello {{inputs.parameters.who}} x{{inputs.parameters.n}} {{item}}", scope);
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(*out, Json(R"(hello Ada x3 {"key":"a","value":1.5})"));
  EXPECT_EQ(fillText("{{ inputs.parameters.num-1 }}!", scope).value(), Json("7!"));
  Json list = {{"l", Json::array({"a", "b"})}};
  JsonScope by_index(list);
  EXPECT_EQ(fillText("{{l.1}}", by_index).value(), Json("b"));
  EXPECT_FALSE(fillText("{{l.2}}", by_index).ok());
  EXPECT_FALSE(fillText("{{l.99999999999999999999999}}", by_index).ok());
  EXPECT_FALSE(fillText("{{l.-1}}", by_index).ok());
}

TEST(TagsTest, AStringThatIsOneTagKeepsTheValuesType) {
  JsonScope scope(root());
  EXPECT_EQ(fillText("{{inputs.parameters.n}}", scope).value(), Json(3));
  EXPECT_EQ(fillText("{{item}}", scope).value(), root()["item"]);
  EXPECT_EQ(fillText("{{=inputs.parameters.n * 2}}", scope).value(), Json(6));
  EXPECT_EQ(fillText("{{=inputs.parameters.n > 2}}", scope).value(), Json(true));
  // With any text around it, it is text.
  EXPECT_EQ(fillText(" {{inputs.parameters.n}}", scope).value(), Json(" 3"));
}

TEST(TagsTest, ExpressionTagsAreEvaluated) {
  JsonScope scope(root());
  auto out = fillText("{{=sprig.upper(inputs.parameters.who)}}-{{= tasks.A.outputs.result == 'heads' ? 1 : 2 }}",
                      scope);
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(*out, Json("ADA-1"));
  EXPECT_EQ(fillText("{{=item.value * 2}}", scope).value(), Json(3.0));
  EXPECT_EQ(fillText("x={{=item.value * 2}}", scope).value(), Json("x=3"));
}

TEST(TagsTest, AnUnknownVariableIsAnErrorNamingIt) {
  JsonScope scope(root());
  auto out = fillText("echo {{inputs.parameters.whom}}", scope);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().message(), "unknown variable in {{inputs.parameters.whom}}");
  EXPECT_EQ(out.error().code(), Error::Code::kNotFound);
  auto expr = fillText("{{=inputs.parameters.whom + 'x'}}", scope);
  ASSERT_FALSE(expr.ok());
  EXPECT_EQ(expr.error().message(),
            "{{=inputs.parameters.whom + 'x'}}: unknown variable 'inputs.parameters.whom' at 1");
}

TEST(TagsTest, UnknownTagsCanBeKeptForALaterPass) {
  JsonScope scope(root());
  FillOptions keep;
  keep.keep_unknown = true;
  EXPECT_EQ(fillText("{{inputs.parameters.who}} {{tasks.B.outputs.result}}", scope, keep).value(),
            Json("Ada {{tasks.B.outputs.result}}"));
  EXPECT_EQ(fillText("{{=tasks.B.outputs.result}}", scope, keep).value(),
            Json("{{=tasks.B.outputs.result}}"));
  // A broken expression is still an error.
  EXPECT_FALSE(fillText("{{=1 +}}", scope, keep).ok());
}

TEST(TagsTest, FillWalksEveryStringAndKey) {
  JsonScope scope(root());
  Json value = Json::parse(R"({"args": ["{{inputs.parameters.who}}", 4, {"{{item.key}}": "{{inputs.parameters.n}}"}],
                              "flag": true})");
  auto out = fill(value, scope);
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(*out, Json::parse(R"({"args": ["Ada", 4, {"a": 3}], "flag": true})"));
  std::vector<std::string> seen;
  ASSERT_TRUE(forEachTag(value, [&](const Tag& t) {
                seen.push_back(t.text);
                return Status::Ok();
              }).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"inputs.parameters.who", "item.key", "inputs.parameters.n"}));
}

TEST(TagsTest, ForEachTagStopsAtTheFirstError) {
  int calls = 0;
  Status st = forEachTag(Json::array({"{{a}}", "{{b}}"}), [&](const Tag& t) -> Status {
    ++calls;
    return Error("no " + t.text);
  });
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message(), "no a");
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(forEachTag(Json("{{open"), [](const Tag&) { return Status::Ok(); }).ok());
}

TEST(TagsTest, AFilledValueStaysWithinTheLimit) {
  Json big = {{"text", std::string(600, 'x')}};
  JsonScope scope(big);
  FillOptions small;
  small.limit = 1000;
  EXPECT_TRUE(fill(Json::array({"{{text}}"}), scope, small).ok());
  auto out = fill(Json::array({"{{text}}", "{{text}}"}), scope, small);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().message(),
            "a filled value is larger than the limit of 1000 bytes (args_limit)");
  EXPECT_FALSE(fillText("{{text}}{{text}}", scope, small).ok());
  small.limit = 500;
  EXPECT_FALSE(fillText("{{text}}", scope, small).ok());
}

}  // namespace
}  // namespace plugboard::core

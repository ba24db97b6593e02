#include <gtest/gtest.h>

#include "core/workflows/expression.h"
#include "core/workflows/tags.h"

namespace plugboard::core {
namespace {

// Every distinct `when`, `expression` and `{{=...}}` of Argo's examples/ (v4.1.2), written
// out here with a scope a run of that example would have.
const Json& exampleScope() {
  static const Json r = Json::parse(R"JSON({
    "steps": {"flip-coin": {"outputs": {"result": "heads"}, "status": "Succeeded"},
              "flip-again": {"outputs": {"result": "tails"}},
              "heads": {"outputs": {"result": "it was heads"}},
              "tails": {"outputs": {"result": "it was tails"}},
              "approval": {"outputs": {"parameters": {"approve": "YES"}}},
              "submit-resource": {"status": "Failed"},
              "iterate-counter": {"outputs": {"result": "3"}},
              "flakey-container": {"status": "Succeeded"},
              "step-1": {"status": "Running"}, "step2": {"status": "Succeeded"},
              "fibonacci-helper": {"outputs": {"parameters": {"result": "8"}}}},
    "tasks": {"flip-coin": {"outputs": {"result": "tails"}},
              "heads": {"outputs": {"result": "it was heads"}},
              "tails": {"outputs": {"result": "it was tails"}}},
    "item": {"evenness": "even"},
    "status": "Succeeded",
    "workflow": {"status": "Succeeded", "creationTimestamp": "2026-03-04T05:06:07Z",
                 "parameters": {"foo": "bar", "json": "[{\"value\": \"true\"}]",
                   "config": "{\"employees\": [{\"name\": \"Baris\", \"age\":43},{\"name\": \"Mo\", \"age\": 42}, {\"name\": \"Jai\", \"age\" :44}]}",
                   "abc": "{\"a\": \"1\", \"b\": \"2\", \"c\": \"3\"}",
                   "weather": "{\"weekWeather\": \"eyJ0ZW1wcyI6IFszNCwgMjcsIDE1LCA1NywgNDZdfQo=\"}"}},
    "inputs": {"parameters": {"limit": "10", "should-print": "true", "num": "5", "num-1": "1",
                              "foo": "3", "safe-to-retry": "true",
                              "week-temps": "{\"avg\":35.8,\"max\":57,\"min\":15}"}},
    "lastRetry": {"exitCode": "2", "status": "Failed", "duration": "30", "message": "pod deleted"}
  })JSON");
  return r;
}

// A `when` as Argo's steps.go takes it: tags filled, then govaluate unless a tag gave the value.
bool exampleWhen(std::string_view text) {
  JsonScope scope(exampleScope());
  auto filled = fillText(text, scope);
  EXPECT_TRUE(filled.ok()) << text << ": " << filled.error().message();
  if (!filled.ok()) return false;
  if (filled->is_boolean()) return filled->get<bool>();
  auto v = evaluateCondition(filled->get<std::string>(), Dialect::kCondition, scope);
  EXPECT_TRUE(v.ok()) << text << ": " << v.error().message();
  return v.ok() && *v;
}

TEST(ExpressionTest, EveryWhenOfArgosExamples) {
  EXPECT_FALSE(exampleWhen("{{steps.flip-coin.outputs.result}} == tails"));
  EXPECT_TRUE(exampleWhen("{{steps.flip-coin.outputs.result}} == heads"));
  EXPECT_TRUE(exampleWhen("{{tasks.flip-coin.outputs.result}} == tails"));
  EXPECT_FALSE(exampleWhen("{{tasks.flip-coin.outputs.result}} == heads"));
  EXPECT_TRUE(exampleWhen("{{item.evenness}} == even"));
  EXPECT_FALSE(exampleWhen("false"));
  EXPECT_TRUE(exampleWhen(
      "( {{steps.flip-coin.outputs.result}} == heads &&\n"
      "  {{steps.flip-again.outputs.result}} == tails\n) ||\n"
      "( {{steps.flip-coin.outputs.result}} == tails &&\n"
      "  {{steps.flip-again.outputs.result}} == tails )"));
  EXPECT_TRUE(exampleWhen("{{steps.approval.outputs.parameters.approve}} == YES"));
  EXPECT_TRUE(exampleWhen("{{workflow.status}} == Succeeded"));
  EXPECT_FALSE(exampleWhen("{{workflow.status}} != Succeeded"));
  EXPECT_TRUE(exampleWhen("{{steps.submit-resource.status}} == Failed"));
  EXPECT_TRUE(exampleWhen("{{steps.iterate-counter.outputs.result}} < {{inputs.parameters.limit}}"));
  EXPECT_TRUE(exampleWhen("{{steps.flip-again.outputs.result}} =~ tai"));
  EXPECT_FALSE(exampleWhen("{{steps.flip-again.outputs.result}} =~ hea"));
  EXPECT_TRUE(exampleWhen("{{steps.flakey-container.status}} == Succeeded"));
  EXPECT_FALSE(exampleWhen("{{steps.flakey-container.status}} == Failed"));
  EXPECT_TRUE(exampleWhen("{{status}} == Succeeded"));
  EXPECT_TRUE(exampleWhen("{{inputs.parameters.should-print}} == true"));
  EXPECT_TRUE(exampleWhen("{{inputs.parameters.num}} != 1 && {{inputs.parameters.num}} != 2"));
  EXPECT_FALSE(exampleWhen("{{inputs.parameters.num-1}} != 1 && {{inputs.parameters.num-1}} != 2"));
  EXPECT_TRUE(exampleWhen("{{= inputs.parameters[\"should-print\"] == 'true'}}"));
  EXPECT_TRUE(exampleWhen("{{=jsonpath(workflow.parameters.json, '$[0].value') == 'true'}}"));
}

Json exampleExpr(std::string_view text) {
  JsonScope scope(exampleScope());
  auto v = evaluate(text, Dialect::kExpr, scope);
  EXPECT_TRUE(v.ok()) << text << ": " << v.error().message();
  return v.ok() ? *v : Json("<error>");
}

TEST(ExpressionTest, EveryExpressionOfArgosExamples) {
  EXPECT_EQ(exampleExpr(R"(workflow.status == "Running")"), Json(false));
  EXPECT_EQ(exampleExpr("workflow.parameters.foo"), Json("bar"));
  EXPECT_EQ(exampleExpr(R"(steps["step-1"].status == "Succeeded")"), Json(false));
  EXPECT_EQ(exampleExpr(R"(steps["step-1"].status == "Running")"), Json(true));
  EXPECT_EQ(exampleExpr(R"(steps.step2.status == "Succeeded")"), Json(true));
  EXPECT_EQ(exampleExpr(R"(steps.step2.status == "Running")"), Json(false));
  EXPECT_EQ(exampleExpr("tasks['flip-coin'].outputs.result == 'heads' ? tasks.heads.outputs.result "
                        ": tasks.tails.outputs.result"),
            Json("it was tails"));
  EXPECT_EQ(exampleExpr("steps['flip-coin'].outputs.result == 'heads' ? steps.heads.outputs.result "
                        ": steps.tails.outputs.result"),
            Json("it was heads"));
  EXPECT_EQ(exampleExpr("asInt(inputs.parameters.num) == 1? 1: asInt(inputs.parameters.num) == 2? 1: "
                        "steps['fibonacci-helper'].outputs.parameters.result"),
            Json("8"));
  // The producer was skipped: its output is not in the scope.
  EXPECT_EQ(exampleExpr("tasks.producer.outputs.parameters.msg ?? 'expr-fallback'"),
            Json("expr-fallback"));
  // retry-conditional.yaml, after its {{inputs.parameters.safe-to-retry}} is filled.
  JsonScope scope(exampleScope());
  auto retry = fillText(
      "asInt(lastRetry.exitCode) > 1 &&\nlastRetry.status != \"Error\" &&\n"
      "asInt(lastRetry.duration) < 120 &&\n({{inputs.parameters.safe-to-retry}} == true || "
      "lastRetry.message matches 'imminent node shutdown|pod deleted')",
      scope);
  ASSERT_TRUE(retry.ok()) << retry.error().message();
  EXPECT_TRUE(evaluateCondition(retry->get<std::string>(), Dialect::kExpr, scope).value());
}

Json exampleTag(std::string_view text) {
  JsonScope scope(exampleScope());
  auto v = fillText(text, scope);
  EXPECT_TRUE(v.ok()) << text << ": " << v.error().message();
  return v.ok() ? *v : Json("<error>");
}

TEST(ExpressionTest, EveryExpressionTagOfArgosExamples) {
  EXPECT_EQ(exampleTag("{{=sprig.date('2006', workflow.creationTimestamp)}}"), Json("2026"));
  EXPECT_EQ(exampleTag("{{=jsonpath(workflow.parameters.config, '$.employees[?(@.name==\"Baris\")].age')}}"),
            Json::parse("[43]"));
  EXPECT_EQ(exampleTag("{{=jsonpath(workflow.parameters.config, '$.employees[?(@.age>42 && @.age<44)].age')}}"),
            Json::parse("[43]"));
  EXPECT_EQ(exampleTag("{{=jsonpath(workflow.parameters.config, '$.employees[0:1]')}}"),
            Json::parse(R"([{"name": "Baris", "age": 43}])"));
  EXPECT_EQ(exampleTag("{{=jsonpath(workflow.parameters.config, '$.employees[*].name')}}"),
            Json::parse(R"(["Baris", "Mo", "Jai"])"));
  EXPECT_EQ(exampleTag("A={{=jsonpath(workflow.parameters.config, '$.employees[0:1]')}}"),
            Json(R"(A=[{"age":43,"name":"Baris"}])"));
  EXPECT_EQ(exampleTag("{{=jsonpath(workflow.parameters.abc, '$.a')}}"), Json("1"));
  EXPECT_EQ(exampleTag("{{=jsonpath(workflow.parameters.abc, '$.b')}}"), Json("2"));
  EXPECT_EQ(exampleTag("{{=jsonpath(workflow.parameters.abc, '$.c')}}"), Json("3"));
  EXPECT_EQ(exampleTag("{{=jsonpath(inputs.parameters['week-temps'], '$.min')}}"), Json(15));
  EXPECT_EQ(exampleTag("{{=jsonpath(inputs.parameters['week-temps'], '$.max')}}"), Json(57));
  EXPECT_EQ(exampleTag("{{=jsonpath(inputs.parameters['week-temps'], '$.avg')}}"), Json(35.8));
  EXPECT_EQ(exampleTag("{{=item}}"), exampleScope()["item"]);
  EXPECT_EQ(exampleTag("hello {{=asInt(inputs.parameters.foo) * 10}} @ "
                       "{{=sprig.date('2006', workflow.creationTimestamp)}}"),
            Json("hello 30 @ 2026"));
  EXPECT_EQ(exampleTag("{{=toJson(filter([1, 3], {# > 1}))}}"), Json("[3]"));
  // expression-reusing-verbose-snippets.yaml
  EXPECT_EQ(exampleTag(R"({{=
    map([
        jsonpath(sprig.b64dec(jsonpath(workflow.parameters.weather, '$.weekWeather')), '$.temps')
      ], {
        toJson({
          avg: sprig.add(#[0], #[1], #[2], #[3], #[4]) / 5,
          min: sprig.min(#[0], #[1], #[2], #[3], #[4]),
          max: sprig.max(#[0], #[1], #[2], #[3], #[4])
        })
    })[0]
  }})"),
            Json(R"({"avg":35.8,"max":57,"min":15})"));
}

// cron-when.yaml's `when` belongs to a CronWorkflow: now() and durations are not supported,
// and say so.
TEST(ExpressionTest, CronWorkflowTimeFunctionsAreRefusedClearly) {
  EXPECT_EQ(checkExpression(" cronworkflow.lastScheduledTime == nil || (now() - "
                            "cronworkflow.lastScheduledTime).Seconds() > 360 ",
                            Dialect::kExpr)
                .error()
                .message(),
            "unknown function 'now' at 44");
}

}  // namespace
}  // namespace plugboard::core

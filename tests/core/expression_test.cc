#include "core/workflows/expression.h"

#include <gtest/gtest.h>

#include "core/workflows/tags.h"

namespace plugboard::core {
namespace {

const Json& root() {
  static const Json r = Json::parse(R"({
    "inputs": {"parameters": {"num": "3", "should-print": "true", "foo": "5"}},
    "workflow": {"name": "wf", "status": "Succeeded", "parameters": {"foo": "bar"}},
    "tasks": {"flip-coin": {"outputs": {"result": "heads"}},
              "heads": {"outputs": {"result": "it was heads"}},
              "tails": {"outputs": {"result": "it was tails"}}},
    "item": 4,
    "list": [1, 2, 3],
    "A": {"Succeeded": true, "Failed": false}
  })");
  return r;
}

Json eval(std::string_view text, Dialect d = Dialect::kExpr) {
  JsonScope scope(root());
  auto v = evaluate(text, d, scope);
  EXPECT_TRUE(v.ok()) << text << ": " << v.error().message();
  return v.ok() ? *v : Json("<error>");
}

bool when(std::string_view text) {
  JsonScope scope(root());
  auto v = evaluateCondition(text, Dialect::kCondition, scope);
  EXPECT_TRUE(v.ok()) << text << ": " << v.error().message();
  return v.ok() && *v;
}

std::string error(std::string_view text, Dialect d = Dialect::kExpr) {
  JsonScope scope(root());
  auto v = evaluate(text, d, scope);
  EXPECT_FALSE(v.ok()) << text << " gave " << (v.ok() ? v->dump() : "");
  return v.ok() ? "" : v.error().message();
}

// Argo's `when` after substitution: govaluate, with bare words read as strings.
TEST(ExpressionTest, ConditionsCompareBareWordsAsStrings) {
  EXPECT_TRUE(when("heads == heads"));
  EXPECT_FALSE(when("tails == heads"));
  EXPECT_TRUE(when("tails != heads"));
  EXPECT_TRUE(when("Succeeded == Succeeded"));
  EXPECT_TRUE(when("'it is' == \"it is\""));
  EXPECT_TRUE(when("even == even"));
  EXPECT_TRUE(when("YES == YES"));
}

TEST(ExpressionTest, ConditionsCompareNumbersByValue) {
  EXPECT_TRUE(when("3 < 10"));  // as strings "3" > "10"
  EXPECT_TRUE(when("3 != 1 && 3 != 2"));
  EXPECT_FALSE(when("1 != 1 && 1 != 2"));
  EXPECT_TRUE(when("2.0 == 2"));
  EXPECT_TRUE(when("10 >= 10 && -1 < 0"));
  EXPECT_FALSE(when("1 == one"));
}

TEST(ExpressionTest, ConditionsHaveBooleansRegexesListsAndGrouping) {
  EXPECT_TRUE(when("true == true"));
  EXPECT_FALSE(when("false"));
  EXPECT_TRUE(when("!false"));
  EXPECT_TRUE(when("tails =~ tai"));
  EXPECT_FALSE(when("heads =~ tai"));
  EXPECT_TRUE(when("heads !~ '^t'"));
  EXPECT_TRUE(when("b in (a, b, c)"));
  EXPECT_FALSE(when("d in (a, b, c)"));
  EXPECT_TRUE(when("( heads == heads &&\n tails == tails\n ) ||\n ( tails == heads && x == y )"));
  EXPECT_TRUE(when("[name with spaces] == 'name with spaces'"));
  EXPECT_TRUE(when("1 + 2 * 3 == 7"));
  EXPECT_TRUE(when("a + 1 == a1"));  // govaluate joins a string and a number
}

TEST(ExpressionTest, ConditionErrorsSayWhatAndWhere) {
  EXPECT_EQ(error("heads ==", Dialect::kCondition), "expression ends early at 9");
  EXPECT_EQ(error("heads == heads)", Dialect::kCondition), "unexpected ')' at 15");
  EXPECT_EQ(error("(a == b", Dialect::kCondition), "expected ')', found end of expression at 8");
  EXPECT_EQ(error("a < 1", Dialect::kCondition), "'<' cannot take string a and float 1 at 3");
  EXPECT_EQ(error("heads && true", Dialect::kCondition),
            "'&&' needs booleans, not string heads at 7");
  EXPECT_EQ(error("'open", Dialect::kCondition), "string without its closing ' at 1");
  JsonScope scope(root());
  auto v = evaluateCondition("heads", Dialect::kCondition, scope);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message(), "'heads' is string heads, not a boolean");
}

TEST(ExpressionTest, ExprReadsVariablesByTheirDottedNames) {
  EXPECT_EQ(eval("inputs.parameters.num"), Json("3"));
  EXPECT_EQ(eval("inputs.parameters['should-print']"), Json("true"));
  EXPECT_EQ(eval("inputs.parameters[\"should-print\"] == 'true'"), Json(true));
  EXPECT_EQ(eval("tasks['flip-coin'].outputs.result"), Json("heads"));
  EXPECT_EQ(eval("item * 2"), Json(8));
  EXPECT_EQ(eval("list[1]"), Json(2));
  EXPECT_EQ(eval("list[-1]"), Json(3));
  EXPECT_EQ(eval("list[1:]"), Json::parse("[2, 3]"));
  EXPECT_EQ(eval("A.Succeeded || A.Failed"), Json(true));
}

// A scope that knows only whole dotted names, as the engine's does.
class FlatScope final : public Scope {
 public:
  std::optional<Json> lookup(std::string_view dotted) const override {
    if (dotted == "steps.flip.outputs.result") return Json("tails");
    if (dotted == "workflow.parameters") return Json{{"x", "1"}};
    return std::nullopt;
  }
};

TEST(ExpressionTest, TheLongestKnownNameIsAskedForFirst) {
  FlatScope scope;
  EXPECT_EQ(evaluate("steps.flip.outputs.result == 'tails'", Dialect::kExpr, scope).value(),
            Json(true));
  EXPECT_EQ(evaluate("workflow.parameters.x", Dialect::kExpr, scope).value(), Json("1"));
  auto missing = evaluate("workflow.parameters.y", Dialect::kExpr, scope);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(), "unknown variable 'workflow.parameters.y' at 1");
  EXPECT_EQ(missing.error().code(), Error::Code::kNotFound);
}

TEST(ExpressionTest, ExprOperatorsFollowExprLang) {
  EXPECT_EQ(eval("1 + 2 * 3"), Json(7));
  EXPECT_EQ(eval("7 / 2"), Json(3.5));
  EXPECT_EQ(eval("7 % 3"), Json(1));
  EXPECT_EQ(eval("2 ** 3"), Json(8.0));
  EXPECT_EQ(eval("-item + 1"), Json(-3));
  EXPECT_EQ(eval("'a' + 'b'"), Json("ab"));
  EXPECT_EQ(eval("1 == 1.0"), Json(true));
  EXPECT_EQ(eval("'1' == 1"), Json(false));
  EXPECT_EQ(eval("not (1 > 2) and true"), Json(true));
  EXPECT_EQ(eval("false or !false"), Json(true));
  EXPECT_EQ(eval("2 in list"), Json(true));
  EXPECT_EQ(eval("5 not in list"), Json(true));
  EXPECT_EQ(eval("'foo' in workflow.parameters"), Json(true));
  EXPECT_EQ(eval("'tails' matches '^t'"), Json(true));
  EXPECT_EQ(eval("'heads' startsWith 'he' && 'heads' endsWith 'ds' && 'heads' contains 'ad'"),
            Json(true));
  EXPECT_EQ(eval("item > 3 ? 'big' : 'small'"), Json("big"));
  EXPECT_EQ(eval("nil ?? 'fallback'"), Json("fallback"));
  EXPECT_EQ(eval("[1, 'a', true][1]"), Json("a"));
  EXPECT_EQ(eval("{a: 1, 'b-c': 2}['b-c']"), Json(2));
}

TEST(ExpressionTest, ExprErrorsSayWhatAndWhere) {
  EXPECT_EQ(error("nope == 1"), "unknown variable 'nope' at 1");
  EXPECT_EQ(error("1 + inputs.parameters.nope"), "unknown variable 'inputs.parameters.nope' at 5");
  EXPECT_EQ(error("asInt(1) + nofunc(2)"), "unknown function 'nofunc' at 12");
  EXPECT_EQ(error("sprig.nofunc(2)"), "unknown function 'sprig.nofunc' at 1");
  EXPECT_EQ(error("1 +"), "expression ends early at 4");
  EXPECT_EQ(error("'a' - 1"), "'-' cannot take string a and int 1 at 5");
  EXPECT_EQ(error("list[5]"), "index 5 out of range (length 3) at 6");
  EXPECT_EQ(error("1 ? 2 : 3"), "'?:' needs booleans, not int 1 at 1");
  EXPECT_EQ(error("asInt('x')"), "'x' is not an integer at 1");
  EXPECT_EQ(error("asInt()"), "int() takes 1 argument, not 0 at 1");
  EXPECT_EQ(error("'a' matches '('"),
            "bad regular expression '(': missing ): ( at 5");
  EXPECT_EQ(error("#"), "'#' outside a closure at 1");
  EXPECT_EQ(error("1 2"), "unexpected number 2 at 3");
}

TEST(ExpressionTest, CheckExpressionLooksAtTheSyntaxAlone) {
  EXPECT_TRUE(checkExpression("unknown.variable == 1", Dialect::kExpr).ok());
  EXPECT_TRUE(checkExpression("heads == heads", Dialect::kCondition).ok());
  EXPECT_EQ(checkExpression("a ==", Dialect::kExpr).error().message(), "expression ends early at 5");
  EXPECT_EQ(checkExpression("f(1)", Dialect::kExpr).error().message(), "unknown function 'f' at 1");
}

TEST(ExpressionTest, ExprConditionsTakeTheStringsTrueAndFalse) {
  JsonScope scope(root());
  EXPECT_TRUE(evaluateCondition("inputs.parameters['should-print']", Dialect::kExpr, scope).value());
  EXPECT_FALSE(evaluateCondition("'false'", Dialect::kExpr, scope).value());
  EXPECT_FALSE(evaluateCondition("'yes'", Dialect::kExpr, scope).ok());
  EXPECT_FALSE(evaluateCondition("'true'", Dialect::kCondition, scope).ok());
}

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

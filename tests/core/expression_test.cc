#include "core/workflows/expression.h"

#include <gtest/gtest.h>

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

TEST(ExpressionTest, ExprBuiltinsAndPipes) {
  EXPECT_EQ(eval("filter(list, # > 1)"), Json::parse("[2, 3]"));
  EXPECT_EQ(eval("map(list, {# * 10})"), Json::parse("[10, 20, 30]"));
  EXPECT_EQ(eval("map([{n: 1}, {n: 2}], .n)"), Json::parse("[1, 2]"));
  EXPECT_EQ(eval("all(list, # > 0) && any(list, # == 2) && none(list, # > 3) && one(list, # == 3)"),
            Json(true));
  EXPECT_EQ(eval("count(list, # >= 2)"), Json(2));
  EXPECT_EQ(eval("find(list, # > 1)"), Json(2));
  EXPECT_EQ(eval("findLastIndex(list, # > 1)"), Json(2));
  EXPECT_EQ(eval("len('héllo') + len(list) + len({a: 1})"), Json(9));
  EXPECT_EQ(eval("string(1.5) + string(2) + string(true)"), Json("1.52true"));
  EXPECT_EQ(eval("int('42') + int(2.9)"), Json(44));
  EXPECT_EQ(eval("float('2.5') * 2"), Json(5.0));
  EXPECT_EQ(eval("upper('a') + lower('B') + trim('  c ')"), Json("Abc"));
  EXPECT_EQ(eval("split('a,b', ',')"), Json::parse(R"(["a", "b"])"));
  EXPECT_EQ(eval("join(['a', 'b'], '-')"), Json("a-b"));
  EXPECT_EQ(eval("replace('aXbX', 'X', '.')"), Json("a.b."));
  EXPECT_EQ(eval("max(1, 5, 3) - min([4, 2])"), Json(3));
  EXPECT_EQ(eval("keys({b: 1, a: 2})"), Json::parse(R"(["a", "b"])"));
  EXPECT_EQ(eval("fromJSON('{\"a\": [1]}').a[0]"), Json(1));
  EXPECT_EQ(eval("toBase64('hi') + fromBase64('aGk=')"), Json("aGk=hi"));
  EXPECT_EQ(eval("get({a: 1}, 'b') ?? 'always'"), Json("always"));
  EXPECT_EQ(eval("sort([3, 1, 2], 'desc')"), Json::parse("[3, 2, 1]"));
  EXPECT_EQ(eval("indexOf('heads', 'ad') + (hasPrefix('heads', 'he') ? 1 : 0)"), Json(3));
  EXPECT_EQ(eval("'[\"a\",\"b\"]' | fromJSON() | join('\",\"')"), Json(R"(a","b)"));
  EXPECT_EQ(eval("concat(['always'], inputs.parameters.num == '3' ? ['test'] : []) | toJson()"),
            Json(R"(["always","test"])"));
  EXPECT_EQ(eval("toJSON({a: 1})"), Json("{\n  \"a\": 1\n}"));
  EXPECT_EQ(eval("missing?.field ?? 'none'"), Json("none"));
}

TEST(ExpressionTest, SprigFunctionsTakeTheirSubjectLast) {
  EXPECT_EQ(eval("sprig.upper('abc') + sprig.lower('D') + sprig.trim('  e  ')"), Json("ABCde"));
  EXPECT_EQ(eval("sprig.replace('bar', 'baz', 'foobar')"), Json("foobaz"));
  EXPECT_EQ(eval("sprig.trimPrefix('v', 'v1.2') + sprig.trimSuffix('.txt', 'a.txt')"), Json("1.2a"));
  EXPECT_EQ(eval("sprig.int('12') + sprig.int('x') + sprig.int(2.7) + sprig.int('3.0')"), Json(17));
  EXPECT_EQ(eval("sprig.add(1, '2', 3.5) + sprig.sub(10, 4) + sprig.mul(2, 3) + sprig.div(7, 2)"),
            Json(21));
  EXPECT_EQ(eval("sprig.max(1, 9, '4') + sprig.min(5, '2') + sprig.mod(7, 4) + sprig.add1(0)"),
            Json(15));
  EXPECT_EQ(eval("sprig.addf(1, 0.5)"), Json(1.5));
  EXPECT_EQ(eval("sprig.default('d', '') + sprig.default('d', 'given')"), Json("dgiven"));
  EXPECT_EQ(eval("sprig.empty('') && !sprig.empty([1])"), Json(true));
  EXPECT_EQ(eval("sprig.coalesce('', nil, 'x')"), Json("x"));
  EXPECT_EQ(eval("sprig.ternary('yes', 'no', 1 > 2)"), Json("no"));
  EXPECT_EQ(eval("sprig.contains('ea', 'heads') && sprig.hasPrefix('he', 'heads')"), Json(true));
  EXPECT_EQ(eval("sprig.b64enc('hello') + sprig.b64dec('aGk=')"), Json("aGVsbG8=hi"));
  EXPECT_EQ(eval("sprig.quote('a') + sprig.squote('b') + sprig.cat('c', nil, 'd')"),
            Json("\"a\"'b'c d"));
  EXPECT_EQ(eval("sprig.join(',', sprig.splitList(':', 'a:b'))"), Json("a,b"));
  EXPECT_EQ(eval("sprig.repeat(3, 'ab') + sprig.trunc(2, 'xyz') + sprig.title('hi there')"),
            Json("ababab" "xy" "Hi There"));
  EXPECT_EQ(eval("sprig.regexMatch('^h.*s$', 'heads') && sprig.regexFind('[0-9]+', 'ab12c') == '12'"),
            Json(true));
  EXPECT_EQ(eval("sprig.regexReplaceAll('a(x*)b', '-ab-axxb-', '${1}W')"), Json("-W-xxW-"));
  EXPECT_EQ(eval("sprig.toJson(sprig.dict('k', 1)) + sprig.toString(2)"), Json(R"({"k":1}2)"));
  EXPECT_EQ(eval("sprig.first(sprig.list(1, 2)) + sprig.last([1, 2]) + len(sprig.uniq([1, 1]))"),
            Json(4));
  EXPECT_EQ(eval("sprig.has(2, [1, 2]) && sprig.fromJson('{\"a\":1}').a == 1"), Json(true));
  EXPECT_EQ(eval("sprig.indent(2, 'a\\nb') + sprig.nindent(1, 'c')"), Json("  a\n  b\n c"));
  EXPECT_EQ(eval("sprig.date('2006-01-02 15:04:05 Mon Jan', 1700000000)"),
            Json("2023-11-14 22:13:20 Tue Nov"));
  EXPECT_EQ(eval("sprig.date('02/01/06 3:04PM', '2024-02-29T13:05:00+01:00')"),
            Json("29/02/24 12:05PM"));
}

TEST(ExpressionTest, JsonPathNamesOneValueOrMatchesSeveral) {
  const char* doc = R"('{"a": {"b": [10, 20, 30]}, "c": [{"n": "x", "v": 1}, {"n": "y", "v": 2}]}')";
  auto path = [&](const std::string& p) { return eval(std::string("jsonpath(") + doc + ", '" + p + "')"); };
  EXPECT_EQ(path("$.a.b[1]"), Json(20));
  EXPECT_EQ(eval(std::string("jsonpath(") + doc + R"(, "$['a']['b'][-1]"))"), Json(30));
  EXPECT_EQ(path("$.a.b[0,2]"), Json::parse("[10, 30]"));
  EXPECT_EQ(path("$.a.b[:2]"), Json::parse("[10, 20]"));
  EXPECT_EQ(path("$.c[*].n"), Json::parse(R"(["x", "y"])"));
  EXPECT_EQ(path("$.c[?(@.v > 1)].n"), Json::parse(R"(["y"])"));
  EXPECT_EQ(path("$..v"), Json::parse("[1, 2]"));
  EXPECT_EQ(path("$.a.*"), Json::parse("[[10, 20, 30]]"));
  EXPECT_EQ(path("$"), eval(std::string("fromJSON(") + doc + ")"));
}

TEST(ExpressionTest, BadFunctionInputIsAnErrorNamingIt) {
  EXPECT_EQ(error("jsonpath('{\"a\": 1}', '$.b')"),
            "jsonpath '$.b': nothing at this path in {\"a\":1} at 1");
  EXPECT_EQ(error("jsonpath('not json', '$.a')"), "jsonpath(): not JSON: not json at 1");
  EXPECT_EQ(error("jsonpath('{}', 'a')"), "jsonpath 'a': a JSONPath starts with '$' at 1");
  EXPECT_EQ(error("jsonpath('[1]', '$[x]')"), "jsonpath '$[x]': bad index 'x' at 1");
  EXPECT_EQ(error("jsonpath('[1]', '$[0')"), "jsonpath '$[0': '[' without ']' at 1");
  EXPECT_EQ(error("fromJSON('{')"), "fromJSON(): not JSON: { at 1");
  EXPECT_EQ(error("sprig.b64dec('@@')"), "not base64: @@ at 1");
  EXPECT_EQ(error("fromBase64('a=b')"), "not base64: a=b at 1");
  EXPECT_EQ(error("asFloat('1.5x')"), "'1.5x' is not a number at 1");
  EXPECT_EQ(error("len(1)"), "len() cannot take int 1 at 1");
  EXPECT_EQ(error("filter(1, # > 0)"), "filter() cannot take int 1 at 8");
  EXPECT_EQ(error("filter(list, # + 1)"), "filter()'s predicate gave int, not a boolean at 14");
  EXPECT_EQ(error("sort([1, 'a'])"), "sort() takes numbers or strings, not a mix at 1");
  EXPECT_EQ(error("repeat('ab', 1000000)"), "repeat() would make more than 1 MiB at 1");
  EXPECT_EQ(error("sprig.repeat(1000000, 'ab')"), "sprig.repeat() would make more than 1 MiB at 1");
  EXPECT_EQ(error("sprig.regexMatch('(', 'a')"), "bad regular expression '(': missing ): ( at 1");
  EXPECT_EQ(error("sprig.ternary(1, 2)"), "sprig.ternary() takes 3 arguments, not 2 at 1");
  EXPECT_EQ(error("7 % 0"), "integer divide by zero at 3");
  EXPECT_EQ(error("(1 + 2)(3)"), "only functions can be called at 8");
  EXPECT_EQ(error("list | 1"), "expected a function call after '|', found number 1 at 8");
  EXPECT_EQ(error("{a 1}"), "expected ':', found number 1 at 4");
}

TEST(ExpressionTest, DeepNestingIsRefusedNotOverflowed) {
  const std::string parens = std::string(10000, '(') + "1" + std::string(10000, ')');
  EXPECT_EQ(error(parens), "expression nested too deeply at 201");
  EXPECT_EQ(error(std::string(10000, '!') + "true", Dialect::kCondition),
            "expression nested too deeply at 200");
  std::string power = "1";  // right-associative: each operator one level deeper
  for (int i = 0; i < 300; ++i) power += " ** 1";
  EXPECT_EQ(error(power).rfind("expression nested too deeply at ", 0), 0u) << error(power);
}

TEST(ExpressionTest, AFlatChainOfOperatorsIsNotDeep) {
  std::string sum = "1";
  for (int i = 0; i < 10000; ++i) sum += " + 1";
  EXPECT_EQ(eval(sum), Json(10001));
  std::string mixed = "2";  // levels of precedence, each chain flat: 2 + 3*2 - 1 + 3*2 - 1 ...
  for (int i = 0; i < 300; ++i) mixed += " + 3 * 2 - 1";
  EXPECT_EQ(eval(mixed), Json(2 + 300 * 5));
  std::string any = "false";  // `||` still stops at the first true
  for (int i = 0; i < 300; ++i) any += " || false";
  any += " || true || asInt('x') == 1";
  EXPECT_EQ(eval(any), Json(true));
  std::string first = "nil";
  for (int i = 0; i < 300; ++i) first += " ?? nil";
  first += " ?? 'found'";
  EXPECT_EQ(eval(first), Json("found"));
  std::string cond = "a == a";
  for (int i = 0; i < 300; ++i) cond += " && b == b";
  EXPECT_TRUE(when(cond));
}

}  // namespace
}  // namespace plugboard::core

namespace plugboard::core {
namespace {

// expr's upper/lower and Sprig's are Go's strings.ToUpper/ToLower: every Unicode letter.
TEST(Expression, UpperAndLowerMapUnicodeLetters) {
  JsonScope scope(Json::object());
  auto upper = evaluate("upper('école')", Dialect::kExpr, scope);
  ASSERT_TRUE(upper.ok()) << upper.error().message();
  EXPECT_EQ(*upper, "ÉCOLE");
  auto lower = evaluate("sprig.lower('ΑΒΓ')", Dialect::kExpr, scope);
  ASSERT_TRUE(lower.ok()) << lower.error().message();
  EXPECT_EQ(*lower, "αβγ");
}

}  // namespace
}  // namespace plugboard::core

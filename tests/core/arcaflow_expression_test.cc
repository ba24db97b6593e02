// Arcaflow's expression language (core/workflows/arcaflow_expression.h), with the
// expectations of its library's own tests (go.flow.arcalot.io/expressions:
// internal/ast/tokenizer_test.go, grammar_test.go, expression_evaluate_test.go), rewritten
// for this API: the library's custom test functions are replaced by built-in ones of the
// same shape.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/workflows/arcaflow_expression.h"

namespace plugboard::core::arcaflow {
namespace {

std::string tree(std::string_view text) {
  auto e = parseExpression(text);
  EXPECT_TRUE(e.ok()) << text << ": " << (e.ok() ? "" : e.error().message());
  return e.ok() ? e->tree() : "<error>";
}

std::string parseError(std::string_view text, Position* at = nullptr) {
  auto e = parseExpression(text, at);
  EXPECT_FALSE(e.ok()) << text << " parsed as " << (e.ok() ? e->tree() : "");
  return e.ok() ? "" : e.error().message();
}

Json eval(std::string_view text, const Json& root = nullptr) {
  auto e = parseExpression(text);
  EXPECT_TRUE(e.ok()) << text << ": " << (e.ok() ? "" : e.error().message());
  if (!e.ok()) return "<parse error>";
  auto v = e->evaluate(root);
  EXPECT_TRUE(v.ok()) << text << ": " << (v.ok() ? "" : v.error().message());
  return v.ok() ? *v : Json("<error>");
}

std::string evalError(std::string_view text, const Json& root = nullptr) {
  auto e = parseExpression(text);
  EXPECT_TRUE(e.ok()) << text << ": " << (e.ok() ? "" : e.error().message());
  if (!e.ok()) return "";
  auto v = e->evaluate(root);
  EXPECT_FALSE(v.ok()) << text << " gave " << (v.ok() ? v->dump() : "");
  return v.ok() ? "" : v.error().message();
}

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// tokenizer_test.go: how text falls into tokens, seen through what it parses into.
TEST(ArcaflowExpression, TokensAsTheLibrary) {
  EXPECT_EQ(tree(R"($.steps.read_kubeconfig.output["success"].credentials[f(1,2)]   )"),
            R"($.steps.read_kubeconfig.output["success"].credentials[f(1, 2)])");
  EXPECT_EQ(tree(R"($.output["ab\"|cd"])"), R"($.output["ab"|cd"])");
  EXPECT_EQ(tree("5 + 5 / 1 >= 5^5"), "((5) + ((5) \u00f7 (1))) >= ((5) ^ (5))");
  // 70 is an integer; 07 (a leading zero) a name, read from the data.
  EXPECT_EQ(tree("70 + 07"), "(70) + (07)");
  EXPECT_EQ(eval("07", Json{{"07", "seven"}}), "seven");
  // Floats: digits, a point, maybe digits and an exponent.
  EXPECT_EQ(tree("0.0 + 40.099 + 5.0e5 + 5.0E-5 + 05.00 + 5."),
            "(((((0) + (40.099)) + (500000)) + (0.00005)) + (5)) + (5)");
  // && and || are two tokens each, as there.
  EXPECT_EQ(tree("true && false || false"), "((true) && (false)) || (false)");
  EXPECT_EQ(tree("true & & false"), "(true) && (false)");
  // true and false inside longer names are names.
  EXPECT_EQ(tree("atrue + truea + atruea + afalse + falsea + afalsea"),
            "(((((atrue) + (truea)) + (atruea)) + (afalse)) + (falsea)) + (afalsea)");
  EXPECT_EQ(tree("\"\" + \"a\" + \"a\\\"b\" + `raw_str/\\`"), R"(((("") + ("a")) + ("a"b")) + ("raw_str/\"))");
  // Not numbers of the language: 1e5 is a name; .5 and 1e+5 are not tokens.
  EXPECT_EQ(tree("1e5"), "1e5");
  EXPECT_TRUE(contains(parseError("$.a + .5"), "invalid token '.5'"));
  EXPECT_TRUE(contains(parseError("1e+5"), "invalid token '1e+5'"));
  EXPECT_TRUE(contains(parseError("$.list.0"), "a list index is written [0]"));
  // Comments are skipped, but cannot end the expression.
  EXPECT_EQ(tree("$.a /* the a */ + 1"), "($.a) + (1)");
  EXPECT_TRUE(contains(parseError("$.a // the a"), "a comment cannot end an expression"));
}

// TestTokenizer_InvalidToken: the column of the bad token, counted in characters.
TEST(ArcaflowExpression, InvalidTokenNamesItsColumn) {
  Position at;
  const std::string message = parseError("[€", &at);
  EXPECT_EQ(at.line, 1u);
  EXPECT_EQ(at.column, 1u);  // '[' cannot start an expression: it is the first error
  const std::string euro = parseError("$[€]", &at);
  EXPECT_TRUE(contains(euro, "invalid token '€'")) << euro;
  EXPECT_TRUE(contains(euro, "at column 3")) << euro;
  EXPECT_EQ(at.column, 3u);
  const std::string after = parseError("\"é\" + #", &at);
  EXPECT_TRUE(contains(after, "at column 7")) << after;
  const std::string lines = parseError("$.a +\n  $.b ]", &at);
  EXPECT_TRUE(contains(lines, "at line 2, column 7")) << lines;
  EXPECT_EQ(at.line, 2u);
  EXPECT_EQ(at.column, 7u);
}

// grammar_test.go: the trees, printed as the library prints them.
TEST(ArcaflowExpression, GrammarAsTheLibrary) {
  EXPECT_EQ(tree("$.test"), "$.test");
  EXPECT_EQ(tree(R"("test")"), R"("test")");
  EXPECT_EQ(tree("$.parent.child"), "$.parent.child");
  EXPECT_EQ(tree(R"($.map["key"])"), R"($.map["key"])");
  EXPECT_EQ(tree(R"($.a.b[0].c["k"])"), R"($.a.b[0].c["k"])");
  EXPECT_EQ(tree(R"($.a.b.c["key"].d)"), R"($.a.b.c["key"].d)");
  EXPECT_EQ(tree(R"($["a"]["b"][0]["c"])"), R"($["a"]["b"][0]["c"])");
  EXPECT_EQ(tree("$['a']"), R"($["a"])");
  EXPECT_EQ(tree("$[$.a]"), "$[$.a]");
  EXPECT_EQ(tree("funcName()"), "funcName()");
  EXPECT_EQ(tree("funcName($.a)"), "funcName($.a)");
  EXPECT_EQ(tree(R"(funcName($.a, 5, "test"))"), R"(funcName($.a, 5, "test"))");
  EXPECT_EQ(tree("funcName().a"), "funcName().a");
  EXPECT_EQ(tree("2 + 2"), "(2) + (2)");
  EXPECT_EQ(tree("1.0 - 2.0 - 3.0"), "((1) - (2)) - (3)");
  EXPECT_EQ(tree("7 + 50 * 6 / 10"), "(7) + (((50) * (6)) \u00f7 (10))");
  EXPECT_EQ(tree("1 ^ 4 * 3"), "((1) ^ (4)) * (3)");
  EXPECT_EQ(tree("2 ^ (4 * 3)"), "(2) ^ ((4) * (3))");
  EXPECT_EQ(tree("(4 + 3) * 2"), "((4) + (3)) * (2)");
  EXPECT_EQ(tree("5 + -5"), "(5) + (-(5) )");
  EXPECT_EQ(tree("---5"), "-(-(-(5) ) ) ");
  EXPECT_EQ(tree("-(-5)"), "-(-(5) ) ");
  EXPECT_EQ(tree("!!true"), "!(!(true) ) ");
  EXPECT_EQ(tree("2 > 2"), "(2) > (2)");
  EXPECT_EQ(tree("2 >= 2"), "(2) >= (2)");
  EXPECT_EQ(tree("0 < 1 + 2"), "(0) < ((1) + (2))");
  EXPECT_EQ(tree("true && false"), "(true) && (false)");
  EXPECT_EQ(tree("2 * 3 + 4 > 2 % 5 || $.test && !true"),
            "((((2) * (3)) + (4)) > ((2) % (5))) || (($.test) && (!(true) ))");
  // TestParseString_EscapedStrings: the library's escapes, and no others.
  EXPECT_EQ(eval(R"("a\"b")"), "a\"b");
  EXPECT_EQ(eval(R"("a\tb")"), "a\tb");
  EXPECT_EQ(eval(R"("a\\b")"), "a\\b");
  EXPECT_EQ(eval(R"("a\bb")"), "a\bb");
  EXPECT_EQ(eval(R"("a\nb")"), "a\nb");
  EXPECT_EQ(eval(R"("a\\nb")"), "a\\nb");
  EXPECT_EQ(eval(R"('\'')"), "'");
  EXPECT_EQ(eval(R"("a\qb\x41")"), "a\\qb\\x41");
  EXPECT_EQ(eval(R"("a\0b")"), std::string("a\0b", 3));
  EXPECT_EQ(eval(R"(`a\nb`)"), "a\\nb");
}

// What the library leaves to its parse order: `!` and unary `-` take everything after them.
TEST(ArcaflowExpression, UnaryOperatorsTakeTheRest) {
  EXPECT_EQ(tree("-5 + 3"), "-((5) + (3)) ");
  EXPECT_EQ(eval("-5 + 3"), -8);
  EXPECT_EQ(tree("!true && false"), "!((true) && (false)) ");
  EXPECT_EQ(eval("!true && false"), true);
  EXPECT_EQ(eval("(-5) + 3"), -2);
}

// grammar_test.go's error cases, each with its message and position.
TEST(ArcaflowExpression, SyntaxErrorsSayWhatAndWhere) {
  struct Bad {
    const char* text;
    const char* message;
  };
  for (const auto& [text, message] : std::vector<Bad>{
           {"", "empty expression at column 1"},
           {"   ", "empty expression"},
           {"$.a.", "expected a name after '.' but found the end of the expression at column 5"},
           {"0[0]", "bracket access cannot follow a literal at column 2"},
           {"0 .a", "dot notation cannot follow a literal at column 3"},
           {"0(0 + 0)", "an opening parenthesis cannot follow a literal at column 2"},
           {R"("a".a)", "dot notation cannot follow a literal"},
           {"()", "expected a value"},
           {"$.$", "expected a name after '.' but found '$' at column 3"},
           {"@.a", "'@' (the current object) cannot start an expression at column 1"},
           {"$[)]", "expected a value (a literal, a name, '$', '(', '-' or '!') but found ')' at column 3"},
           {"$)a", "expected an operator or the end of the expression but found ')' at column 2"},
           {"$.(", "expected a name after '.' but found '(' at column 3"},
           {"2 = 2", "expected '=' (for '==') but found '2' at column 5"},
           {"2 ! 2", "expected '=' (for '!=')"},
           {"true & false", "expected '&' (for '&&') but found 'false'"},
           {"$.test[5)", "expected ']' but found ')' at column 9"},
           {"5 * (5 * 5]", "expected ')' but found ']' at column 11"},
           {R"(f(""1)", "expected ',' or ')' but found '1'"},
           {R"(f("",)", "expected ')' but found the end of the expression"},
           {R"(f("")", "expected ',' or ')' but found the end of the expression"},
           {"f(1,)", "expected a value"},
           {"1 +", "expected a value (a literal, a name, '$', '(', '-' or '!') but found the end"},
           {"\"abc", "invalid token '\"abc' (unterminated string) at column 1"},
           {"`a\nb`", "a raw string cannot span lines"},
           {"99999999999999999999", "integer 99999999999999999999 out of range"},
           {"1.0e999", "float 1.0e999 out of range"},
       }) {
    EXPECT_TRUE(contains(parseError(text), message)) << text << ": " << parseError(text);
  }
  // Nesting is bounded, so that no expression exhausts the stack.
  EXPECT_TRUE(contains(parseError(std::string(5000, '(') + "1" + std::string(5000, ')')), "nested too deeply"));
  std::string chain = "$";
  for (int i = 0; i < 5000; ++i) chain += ".a";
  EXPECT_TRUE(contains(parseError(chain), "nested too deeply"));
  std::string power = "1";  // each ^ nests its right side: (1) ^ ((1) ^ ...)
  for (int i = 0; i < 5000; ++i) power = "1 ^ (" + power + ")";
  EXPECT_TRUE(contains(parseError(power), "nested too deeply"));
}

// A chain of operators leans left, ((1 + 1) + 1) + ...: walked in a loop, it is not deep.
TEST(ArcaflowExpression, AFlatChainOfOperatorsIsNotDeep) {
  std::string sum = "1";
  for (int i = 0; i < 5000; ++i) sum += " + 1";
  EXPECT_EQ(eval(sum), Json(5001));
  std::string mixed = "$.n";
  for (int i = 0; i < 300; ++i) mixed += " + 3 * $.n - 1";
  EXPECT_EQ(eval(mixed, Json{{"n", 2}}), Json(2 + 300 * 5));
  std::string all = "true";
  for (int i = 0; i < 300; ++i) all += " && 1 == 1";
  EXPECT_EQ(eval(all), Json(true));
  auto e = parseExpression("$.a + $.b - $.a + toUpper($.c)");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->tree(), "((($.a) + ($.b)) - ($.a)) + (toUpper($.c))");
  std::vector<std::string> paths;
  for (const auto& p : e->dependencies()) paths.push_back(pathText(p));
  EXPECT_EQ(paths, (std::vector<std::string>{"$.a", "$.b", "$.c"}));
  std::string unknown = "1";
  for (int i = 0; i < 300; ++i) unknown += " + 1";
  auto bad = parseExpression(unknown + " + nope(1)");
  ASSERT_TRUE(bad.ok());
  EXPECT_TRUE(contains(bad->check().error().message(), "unknown function 'nope'"));
}

// expression_evaluate_test.go: paths, lists, functions, operators.
TEST(ArcaflowExpression, EvaluatesAsTheLibrary) {
  EXPECT_EQ(eval("$", "Hello world!"), "Hello world!");
  const Json message = {{"message", "Hello world!"}};
  EXPECT_EQ(eval("$.message", message), "Hello world!");
  EXPECT_EQ(eval("   $.message    \n", message), "Hello world!");
  EXPECT_EQ(eval(R"($["message"])", message), "Hello world!");
  EXPECT_EQ(eval("$.container.message", Json{{"container", message}}), "Hello world!");
  EXPECT_EQ(eval("$[0]", Json::array({"Hello world!"})), "Hello world!");
  EXPECT_EQ(eval("$[1]", Json::array({"a", "b", "c"})), "b");
  EXPECT_EQ(eval("$.l1.l2[1]", Json::parse(R"({"l1": {"l2": ["a", "b", "c"]}})")), "b");
  EXPECT_EQ(eval("$[-1]", Json::array({"a"})), "a");
  EXPECT_TRUE(contains(evalError("$[-2]", Json::array({"a"})), "index -2 is out of $ (1 items)"));
  EXPECT_TRUE(contains(evalError("$[10]", Json::array({"a"})), "index 10 is out of $ (1 items)"));
  EXPECT_TRUE(contains(evalError(R"($["0"])", Json::array({"a"})), "$ is a list, indexed by integers, not by a string"));
  // Functions (the library's test functions are its own; built-in ones of the same shape).
  EXPECT_EQ(eval(R"(toUpper("a"))"), "A");
  EXPECT_EQ(eval("toUpper($.message)", message), "HELLO WORLD!");
  EXPECT_EQ(eval(R"(splitString($.message, " "))", message), Json::array({"Hello", "world!"}));
  EXPECT_EQ(eval(R"(toLower(toUpper($.message)))", message), "hello world!");
  EXPECT_EQ(eval(R"(splitString("a,b", ",")[1])"), "b");
  EXPECT_TRUE(contains(evalError("wrong()"), "unknown function 'wrong' at column 1"));
  EXPECT_TRUE(contains(evalError(R"(toUpper("a", "b"))"), "function 'toUpper' takes 1 argument, got 2"));
  // Integers.
  EXPECT_EQ(eval("5 + 5"), 10);
  EXPECT_EQ(eval("$.a + $.b", Json{{"a", 1}, {"b", 2}}), 3);
  EXPECT_EQ(eval("5 - 1"), 4);
  EXPECT_EQ(eval("2 * 2"), 4);
  EXPECT_EQ(eval("2 / 2"), 1);
  EXPECT_EQ(eval("7 / 2"), 3);
  EXPECT_EQ(eval("3 % 2"), 1);
  EXPECT_EQ(eval("2 ^ 3"), 8);
  EXPECT_TRUE(eval("2 ^ 3").is_number_integer());
  for (const auto& [text, want] : std::vector<std::pair<const char*, bool>>{
           {"1 == 1", true},   {"1 == 2", false},  {"1 != 1", false},  {"1 != 2", true},
           {"1 > 1", false},   {"2 > 1", true},    {"1 < 1", false},   {"0 < 1", true},
           {"1 >= 1", true},   {"0 >= 1", false},  {"1 <= 1", true},   {"2 <= 1", false},
           {"1.0 == 1.0", true}, {"1.0 == 2.0", false}, {"1.0 != 1.0", false}, {"1.0 != 2.0", true},
           {"1.0 > 1.0", false}, {"1.01 > 1.0", true}, {"1.0 < 1.0", false}, {"1.0 < 1.01", true},
           {"1.0 >= 1.0", true}, {"0.1 >= 1.0", false}, {"1.0 <= 1.0", true}, {"1.1 <= 1.0", false},
           {"false == false", true}, {"false == true", false}, {"false != true", true},
           {"false != false", false}, {"true && true", true}, {"true && false", false},
           {"false && true", false}, {"false && false", false}, {"true || false", true},
           {"false || false", false}, {"true || true", true}, {"false || true", true},
           {R"("a" == "a")", true}, {R"("a" == "A")", false}, {R"("a" != "a")", false},
           {R"("a" != "A")", true}, {R"("a" > "b")", false}, {R"("b" > "a")", true},
           {R"("a" < "b")", true}, {R"("c" < "b")", false}, {R"("a" >= "a")", true},
           {R"("a" >= "b")", false}, {R"("a" <= "b")", true}, {R"("c" <= "b")", false},
           {"!true", false}, {"!false", true}, {"!(5 != 5) && !false", true},
       }) {
    EXPECT_EQ(eval(text), want) << text;
  }
  // Floats.
  EXPECT_EQ(eval("5.0 + 5.0"), 10.0);
  EXPECT_EQ(eval("5.0E-5 + 4.0e2"), 400.00005);
  EXPECT_EQ(eval("5.0 - 1.0"), 4.0);
  EXPECT_EQ(eval("2.0 * 2.0"), 4.0);
  EXPECT_EQ(eval("2.0 / 2.0"), 1.0);
  EXPECT_EQ(eval("3.0 % 2.0"), 1.0);
  EXPECT_EQ(eval("2.0 ^ 3.0"), 8.0);
  EXPECT_TRUE(eval("2.0 ^ 3.0").is_number_float());
  EXPECT_EQ(eval(R"("a" + "b")"), "ab");
  EXPECT_EQ(eval("intToFloat(5) + 5.0"), 10.0);
  // Negation.
  EXPECT_EQ(eval("-5"), -5);
  EXPECT_EQ(eval("--5"), 5);
  EXPECT_EQ(eval("-(-5)"), 5);
  EXPECT_EQ(eval("--(-5)"), -5);
  EXPECT_EQ(eval("-5.0"), -5.0);
  EXPECT_EQ(eval("5 - -5"), 10);
}

TEST(ArcaflowExpression, TypeErrorsNameTheOperator) {
  EXPECT_TRUE(contains(evalError("1 && 1"), "'&&' does not apply to integer values at column 3"));
  EXPECT_TRUE(contains(evalError("1 || 1"), "'||' does not apply to integer values"));
  EXPECT_TRUE(contains(evalError("true + false"), "'+' does not apply to bool values"));
  EXPECT_TRUE(contains(evalError("true > false"), "'>' does not apply to bool values"));
  EXPECT_TRUE(contains(evalError(R"("5" - "6")"), "'-' does not apply to string values"));
  EXPECT_TRUE(contains(evalError(R"("5" && "6")"), "'&&' does not apply to string values"));
  EXPECT_TRUE(contains(evalError("5 + 5.0"),
                       "the two sides of '+' differ in type: integer and float (convert one with intToFloat"));
  EXPECT_TRUE(contains(evalError("-true"), "'-' needs an integer or a float, got bool at column 1"));
  EXPECT_TRUE(contains(evalError("!5"), "'!' needs a bool, got integer"));
  EXPECT_TRUE(contains(evalError("$.a == $.a", Json{{"a", {1}}}), "'==' does not apply to list values"));
  // Both sides of && and || are evaluated, as there.
  EXPECT_TRUE(contains(evalError("false && $.missing", Json::object()), "no value at $.missing"));
  // Integers wrap as Go's do; division by zero is an error (it stops the engine).
  EXPECT_EQ(eval("9223372036854775807 + 1"), std::numeric_limits<std::int64_t>::min());
  EXPECT_TRUE(contains(evalError("1 / 0"), "integer division by zero at column 3"));
  EXPECT_TRUE(contains(evalError("1 % 0"), "integer division by zero"));
  EXPECT_EQ(eval("$.min / -1", Json{{"min", std::numeric_limits<std::int64_t>::min()}}),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_TRUE(std::isinf(eval("1.0 / 0.0").get<double>()));
}

// A path that is not there names the path, what is there instead, and the column.
TEST(ArcaflowExpression, MissingPathsAreNamed) {
  const Json root = Json::parse(R"({
    "input": {"x": 1, "names": ["a", "b"]},
    "steps": {"a": {"outputs": {"success": {"y": 2, "z": 3}}}}
  })");
  EXPECT_EQ(eval("$.steps.a.outputs.success.y", root), 2);
  const std::string missing = evalError("$.steps.a.outputs.success.w", root);
  EXPECT_TRUE(contains(missing,
                       "no value at $.steps.a.outputs.success.w: $.steps.a.outputs.success has no key 'w' "
                       "(it has y, z) at column 27"))
      << missing;
  const std::string output = evalError("$.steps.a.outputs.error.reason", root);
  EXPECT_TRUE(contains(output, "no value at $.steps.a.outputs.error: $.steps.a.outputs has no key 'error'"))
      << output;
  EXPECT_TRUE(contains(evalError("$.input.names[2]", root),
                       "no value at $.input.names[2]: index 2 is out of $.input.names (2 items)"));
  EXPECT_TRUE(contains(evalError("$.input.x.y", root),
                       "no value at $.input.x.y: $.input.x is an integer, which has no members"));
  EXPECT_TRUE(contains(evalError(R"($.input["q"])", root), R"(no value at $.input["q"])"));
  EXPECT_TRUE(contains(evalError("$.steps[$.input.x]", root), "no value at $.steps[1]"));
  // A bare name reads the root; inside brackets, the value being indexed (as the library).
  EXPECT_EQ(eval("input.x", root), 1);
  EXPECT_EQ(eval("$.m[k]", Json::parse(R"({"m": {"k": "key", "key": "value"}})")), "value");
  // Integer keys reach maps whose integer keys arrived as text.
  EXPECT_EQ(eval("$.m[5]", Json::parse(R"({"m": {"5": "five"}})")), "five");
  EXPECT_EQ(eval("$.input.names[$.i]", Json{{"input", root["input"]}, {"i", -1}}), "b");
  // A function's error names the function and the call's position.
  const std::string call = evalError("1 + stringToInt($.input.names[0])", root);
  EXPECT_TRUE(contains(call, "stringToInt: \"a\" is not a base-10 integer at column 5")) << call;
}

TEST(ArcaflowExpression, CheckFindsUnknownFunctionsAndArity) {
  auto e = parseExpression("toUpper($.a) + nope(1)");
  ASSERT_TRUE(e.ok());
  auto s = e->check();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.error().message(), "unknown function 'nope' at column 16 (functions: abs, bindConstants"))
      << s.error().message();
  auto arity = parseExpression("1 + splitString($.a)");
  ASSERT_TRUE(arity.ok());
  auto a = arity->check();
  ASSERT_FALSE(a.ok());
  EXPECT_TRUE(contains(a.error().message(), "function 'splitString' takes 2 arguments, got 1 at column 5"));
  auto fine = parseExpression("bindConstants($.input.items, $.input.constants)");
  ASSERT_TRUE(fine.ok());
  EXPECT_TRUE(fine->check().ok());
}

std::vector<std::string> dependencies(std::string_view text) {
  auto e = parseExpression(text);
  EXPECT_TRUE(e.ok()) << text;
  std::vector<std::string> out;
  if (e.ok()) {
    for (const auto& p : e->dependencies()) out.push_back(pathText(p));
  }
  return out;
}

// The paths an expression reads, as the engine's executor uses them for the order of
// steps (workflow/executor.go): `$.steps.<id>.outputs.<output>...` names a step's output.
TEST(ArcaflowExpression, DependenciesAreThePathsRead) {
  using V = std::vector<std::string>;
  EXPECT_EQ(dependencies("$.steps.a.outputs.success.y"), V{"$.steps.a.outputs.success.y"});
  auto e = parseExpression("$.steps.a.outputs.success.y");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->dependencies(), std::vector<Path>{Path({"$", "steps", "a", "outputs", "success", "y"})});
  EXPECT_EQ(dependencies("$.input.x + $.steps.b.outputs.done.n"),
            (V{"$.input.x", "$.steps.b.outputs.done.n"}));
  EXPECT_EQ(dependencies(R"($.input.list[0]["k"])"), V{R"($.input.list[0].k)"});
  // -1 is an operation on 1, not a literal key (as the library's addKeyNode sees it).
  EXPECT_EQ(dependencies(R"($.input["odd key"][-1])"), V{R"($.input["odd key"])"});
  EXPECT_EQ(dependencies("$.input.list[$.input.i].name"), (V{"$.input.i", "$.input.list"}));
  EXPECT_EQ(dependencies("$.input.map[key]"), (V{"$.input.map.key", "$.input.map"}));
  EXPECT_EQ(dependencies("bindConstants($.input.items, $.steps.c.outputs.success)"),
            (V{"$.input.items", "$.steps.c.outputs.success"}));
  EXPECT_EQ(dependencies(R"(splitString($.input.s, ",")[0])"), V{"$.input.s"});
  EXPECT_EQ(dependencies("input.x"), V{"$.input.x"});
  EXPECT_EQ(dependencies("$.input.x + $.input.x"), V{"$.input.x"});
  EXPECT_EQ(dependencies("-$.input.n"), V{"$.input.n"});
  EXPECT_EQ(dependencies("$"), V{"$"});
  EXPECT_EQ(dependencies("1 + 2"), V{});
  EXPECT_EQ(dependencies(R"(readFile("x.txt"))"), V{});
}

// Evaluation reads the data; it does not copy or change it, and one expression may be
// evaluated again with other data.
TEST(ArcaflowExpression, OneExpressionManyRoots) {
  auto e = parseExpression("$.steps.s.outputs.success.n * 2");
  ASSERT_TRUE(e.ok());
  for (int n = 0; n < 3; ++n) {
    auto v = e->evaluate(Json{{"steps", {{"s", {{"outputs", {{"success", {{"n", n}}}}}}}}}});
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(*v, n * 2);
  }
  EXPECT_EQ(e->text(), "$.steps.s.outputs.success.n * 2");
}

}  // namespace
}  // namespace plugboard::core::arcaflow

// The Arcaflow engine's built-in functions (core/workflows/arcaflow_expression.h), with the
// expectations of the engine's own internal/builtinfunctions/functions_test.go: the same
// inputs, outputs and error cases, each called through an expression.
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/workflows/arcaflow_expression.h"
#include "tests/support/files.h"

namespace plugboard::core::arcaflow {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kNegZero = std::copysign(0.0, -1.0);
constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMinInt = std::numeric_limits<std::int64_t>::min();

// `function` called with `args`, passed through the data root so that any value (NaN, -0)
// reaches it as it is.
Expected<Json> call(const std::string& function, const std::vector<Json>& args,
                    const Context& context = {}) {
  std::string text = function + "(";
  for (std::size_t i = 0; i < args.size(); ++i) text += (i ? ", $.args[" : "$.args[") + std::to_string(i) + "]";
  text += ")";
  auto e = parseExpression(text);
  if (!e) return e.error();
  if (auto s = e->check(); !s) return s.error();
  return e->evaluate(Json{{"args", args}}, context);
}

// The same value and the same type: integer, float (with its sign, NaN equal to NaN), text.
::testing::AssertionResult same(const Json& want, const Json& got) {
  const bool want_float = want.is_number_float();
  if (want_float != got.is_number_float() || want.is_number_integer() != got.is_number_integer()) {
    return ::testing::AssertionFailure() << "want " << want.dump() << ", got " << got.dump() << " (types differ)";
  }
  if (want_float) {
    const double w = want.get<double>();
    const double g = got.get<double>();
    if ((std::isnan(w) && std::isnan(g)) || (w == g && std::signbit(w) == std::signbit(g))) {
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "want " << w << ", got " << g;
  }
  if (want == got) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "want " << want.dump() << ", got " << got.dump();
}

struct Case {
  const char* name;
  const char* function;
  std::vector<Json> args;
  bool error;
  Json expected;
};

// functions_test.go's testData, case for case (readFile's two cases are below, with a
// directory of their own).
std::vector<Case> bulkCases() {
  using I = std::int64_t;
  return {
      {"int-to-float-positive", "intToFloat", {I{1}}, false, 1.0},
      {"int-to-float-negative", "intToFloat", {I{-1}}, false, -1.0},
      {"int-to-float-zero", "intToFloat", {I{0}}, false, 0.0},
      {"float-to-int-positive", "floatToInt", {1.0}, false, I{1}},
      {"float-to-int-negative-whole", "floatToInt", {-1.0}, false, I{-1}},
      {"float-to-int-negative-fractional", "floatToInt", {-1.9}, false, I{-1}},
      {"float-to-int-positive-zero", "floatToInt", {0.0}, false, I{0}},
      {"float-to-int-negative-zero", "floatToInt", {kNegZero}, false, I{0}},
      {"float-to-int-positive-infinity", "floatToInt", {kInf}, false, kMaxInt},
      {"float-to-int-negative-infinity", "floatToInt", {-kInf}, false, kMinInt},
      {"float-to-int-nan", "floatToInt", {kNaN}, true, nullptr},
      {"int-to-string-positive", "intToString", {I{11}}, false, "11"},
      {"int-to-string-zero", "intToString", {I{0}}, false, "0"},
      {"int-to-string-negative", "intToString", {I{-11}}, false, "-11"},
      {"float-to-string-positive-whole", "floatToString", {11.0}, false, "11"},
      {"float-to-string-negative-whole", "floatToString", {-11.0}, false, "-11"},
      {"float-to-string-positive-fractional", "floatToString", {11.1}, false, "11.1"},
      {"float-to-string-negative-fractional", "floatToString", {-11.1}, false, "-11.1"},
      {"float-to-string-zero", "floatToString", {0.0}, false, "0"},
      {"float-to-string-negative-zero", "floatToString", {kNegZero}, false, "-0"},
      {"float-to-string-nan", "floatToString", {kNaN}, false, "NaN"},
      {"float-to-string-positive-infinity", "floatToString", {kInf}, false, "+Inf"},
      {"float-to-string-negative-infinity", "floatToString", {-kInf}, false, "-Inf"},
      {"bool-to-string-true", "boolToString", {true}, false, "true"},
      {"bool-to-string-false", "boolToString", {false}, false, "false"},
      {"string-to-int-positive", "stringToInt", {"11"}, false, I{11}},
      {"string-to-int-negative", "stringToInt", {"-11"}, false, I{-11}},
      {"string-to-int-zero", "stringToInt", {"0"}, false, I{0}},
      {"string-to-int-zero-prefixed", "stringToInt", {"-00005"}, false, I{-5}},
      {"string-to-int-invalid-1", "stringToInt", {"zero"}, true, nullptr},
      {"string-to-int-invalid-2", "stringToInt", {"1.0"}, true, nullptr},
      {"string-to-int-invalid-3", "stringToInt", {""}, true, nullptr},
      {"string-to-int-invalid-4", "stringToInt", {"0b1"}, true, nullptr},
      {"string-to-int-invalid-5", "stringToInt", {"0o1"}, true, nullptr},
      {"string-to-int-invalid-6", "stringToInt", {"0x1"}, true, nullptr},
      {"string-to-int-invalid-7", "stringToInt", {"1_000_000"}, true, nullptr},
      {"string-to-float-positive", "stringToFloat", {"11.1"}, false, 11.1},
      {"string-to-float-negative", "stringToFloat", {"-11.1"}, false, -11.1},
      {"string-to-float-zero-1", "stringToFloat", {"0"}, false, 0.0},
      {"string-to-float-zero-2", "stringToFloat", {"-0"}, false, kNegZero},
      {"string-to-float-positive-infinity-1", "stringToFloat", {"Inf"}, false, kInf},
      {"string-to-float-positive-infinity-2", "stringToFloat", {"+Inf"}, false, kInf},
      {"string-to-float-negative-infinity", "stringToFloat", {"-Inf"}, false, -kInf},
      {"string-to-float-scientific-notation-1", "stringToFloat", {"5e+5"}, false, 500000.0},
      {"string-to-float-scientific-notation-2", "stringToFloat", {"5E-5"}, false, 0.00005},
      {"string-to-float-error-1", "stringToFloat", {""}, true, nullptr},
      {"string-to-float-error-2", "stringToFloat", {"ten"}, true, nullptr},
      {"string-to-float-error-3", "stringToFloat", {"5E+500"}, true, nullptr},
      {"string-to-bool-1", "stringToBool", {"true"}, false, true},
      {"string-to-bool-2", "stringToBool", {"True"}, false, true},
      {"string-to-bool-3", "stringToBool", {"TRUE"}, false, true},
      {"string-to-bool-4", "stringToBool", {"t"}, false, true},
      {"string-to-bool-5", "stringToBool", {"T"}, false, true},
      {"string-to-bool-6", "stringToBool", {"1"}, false, true},
      {"string-to-bool-7", "stringToBool", {"false"}, false, false},
      {"string-to-bool-8", "stringToBool", {"False"}, false, false},
      {"string-to-bool-9", "stringToBool", {"FALSE"}, false, false},
      {"string-to-bool-10", "stringToBool", {"f"}, false, false},
      {"string-to-bool-11", "stringToBool", {"F"}, false, false},
      {"string-to-bool-12", "stringToBool", {"0"}, false, false},
      {"string-to-bool-error-1", "stringToBool", {""}, true, nullptr},
      {"string-to-bool-error-2", "stringToBool", {"abc"}, true, nullptr},
      {"ceil-1", "ceil", {0.0}, false, 0.0},
      {"ceil-2", "ceil", {0.1}, false, 1.0},
      {"ceil-3", "ceil", {0.99}, false, 1.0},
      {"ceil-4", "ceil", {-0.1}, false, kNegZero},  // Go's math.Ceil(-0.1) is -0
      {"floor-1", "floor", {0.0}, false, 0.0},
      {"floor-2", "floor", {1.1}, false, 1.0},
      {"floor-3", "floor", {2.9999}, false, 2.0},
      {"floor-4", "floor", {-0.1}, false, -1.0},
      {"round-1", "round", {0.0}, false, 0.0},
      {"round-2", "round", {0.1}, false, 0.0},
      {"round-3", "round", {0.4}, false, 0.0},
      {"round-4", "round", {0.5}, false, 1.0},
      {"round-5", "round", {0.9}, false, 1.0},
      {"round-6", "round", {-0.9}, false, -1.0},
      {"round-7", "round", {-0.5}, false, -1.0},
      {"round-8", "round", {-0.01}, false, kNegZero},  // Go's math.Round(-0.01) is -0
      {"abs-1", "abs", {0.0}, false, 0.0},
      {"abs-2", "abs", {-1.0}, false, 1.0},
      {"abs-3", "abs", {1.0}, false, 1.0},
      {"to-lower-1", "toLower", {""}, false, ""},
      {"to-lower-2", "toLower", {"abc"}, false, "abc"},
      {"to-lower-3", "toLower", {"ABC"}, false, "abc"},
      {"to-lower-4", "toLower", {"aBc"}, false, "abc"},
      {"to-upper-1", "toUpper", {""}, false, ""},
      {"to-upper-2", "toUpper", {"abc"}, false, "ABC"},
      {"to-upper-3", "toUpper", {"ABC"}, false, "ABC"},
      {"to-upper-4", "toUpper", {"aBc"}, false, "ABC"},
      {"split-string-1", "splitString", {"", ","}, false, Json::array({""})},
      {"split-string-2", "splitString", {"abc", ","}, false, Json::array({"abc"})},
      {"split-string-3", "splitString", {"a,b", ","}, false, Json::array({"a", "b"})},
      {"split-string-4", "splitString", {"a,b,c,d", ","}, false, Json::array({"a", "b", "c", "d"})},
      {"split-string-5", "splitString", {"1,,2,", ","}, false, Json::array({"1", "", "2", ""})},
  };
}

TEST(ArcaflowFunctions, EngineBulkCases) {
  for (const auto& c : bulkCases()) {
    SCOPED_TRACE(c.name);
    auto got = call(c.function, c.args);
    if (c.error) {
      EXPECT_FALSE(got.ok()) << "gave " << (got.ok() ? got->dump() : "");
      if (!got.ok()) {
        EXPECT_NE(got.error().message().find(c.function), std::string::npos) << got.error().message();
      }
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.error().message();
    EXPECT_TRUE(same(c.expected, *got));
  }
}

// The Go test compares with DeepEqual, where -0 == 0; Go's math gives -0 in the two cases
// above marked so, and the engine then prints "-0": so does this.
TEST(ArcaflowFunctions, CeilAndRoundKeepTheSignOfZero) {
  for (const char* text : {"floatToString(ceil($.x))", "floatToString(round($.y))"}) {
    auto e = parseExpression(text);
    ASSERT_TRUE(e.ok());
    auto got = e->evaluate(Json{{"x", -0.1}, {"y", -0.01}});
    ASSERT_TRUE(got.ok()) << got.error().message();
    EXPECT_EQ(*got, "-0") << text;
  }
}

// Test_floatToFormattedString_success: every format, four precisions, ten inputs.
TEST(ArcaflowFunctions, FloatToFormattedStringAsTheEngine) {
  const std::vector<double> inputs = {123,  12300, 0.000123, 1.0 / 8.0, 2.0 / 3.0,
                                      kInf, -kInf, kNaN,     0.0,       kNegZero};
  const std::map<std::string, std::map<int, std::vector<std::string>>> results = {
      {"b",
       {{0,
         {"8655355533852672p-46", "6761996510822400p-39", "4537899042132550p-65",
          "4503599627370496p-55", "6004799503160661p-53", "+Inf", "-Inf", "NaN", "0p-1074",
          "-0p-1074"}}}},
      {"e",
       {{0, {"1e+02", "1e+04", "1e-04", "1e-01", "7e-01", "+Inf", "-Inf", "NaN", "0e+00", "-0e+00"}},
        {1, {"1.2e+02", "1.2e+04", "1.2e-04", "1.2e-01", "6.7e-01", "+Inf", "-Inf", "NaN", "0.0e+00", "-0.0e+00"}},
        {-1,
         {"1.23e+02", "1.23e+04", "1.23e-04", "1.25e-01", "6.666666666666666e-01", "+Inf", "-Inf",
          "NaN", "0e+00", "-0e+00"}},
        {15,
         {"1.230000000000000e+02", "1.230000000000000e+04", "1.230000000000000e-04",
          "1.250000000000000e-01", "6.666666666666666e-01", "+Inf", "-Inf", "NaN",
          "0.000000000000000e+00", "-0.000000000000000e+00"}}}},
      {"E",
       {{0, {"1E+02", "1E+04", "1E-04", "1E-01", "7E-01", "+Inf", "-Inf", "NaN", "0E+00", "-0E+00"}},
        {1, {"1.2E+02", "1.2E+04", "1.2E-04", "1.2E-01", "6.7E-01", "+Inf", "-Inf", "NaN", "0.0E+00", "-0.0E+00"}},
        {-1,
         {"1.23E+02", "1.23E+04", "1.23E-04", "1.25E-01", "6.666666666666666E-01", "+Inf", "-Inf",
          "NaN", "0E+00", "-0E+00"}},
        {15,
         {"1.230000000000000E+02", "1.230000000000000E+04", "1.230000000000000E-04",
          "1.250000000000000E-01", "6.666666666666666E-01", "+Inf", "-Inf", "NaN",
          "0.000000000000000E+00", "-0.000000000000000E+00"}}}},
      {"f",
       {{0, {"123", "12300", "0", "0", "1", "+Inf", "-Inf", "NaN", "0", "-0"}},
        {1, {"123.0", "12300.0", "0.0", "0.1", "0.7", "+Inf", "-Inf", "NaN", "0.0", "-0.0"}},
        {-1, {"123", "12300", "0.000123", "0.125", "0.6666666666666666", "+Inf", "-Inf", "NaN", "0", "-0"}},
        {15,
         {"123.000000000000000", "12300.000000000000000", "0.000123000000000", "0.125000000000000",
          "0.666666666666667", "+Inf", "-Inf", "NaN", "0.000000000000000", "-0.000000000000000"}}}},
      {"g",
       {{0, {"1e+02", "1e+04", "0.0001", "0.1", "0.7", "+Inf", "-Inf", "NaN", "0", "-0"}},
        {1, {"1e+02", "1e+04", "0.0001", "0.1", "0.7", "+Inf", "-Inf", "NaN", "0", "-0"}},
        {-1, {"123", "12300", "0.000123", "0.125", "0.6666666666666666", "+Inf", "-Inf", "NaN", "0", "-0"}},
        {15, {"123", "12300", "0.000123", "0.125", "0.666666666666667", "+Inf", "-Inf", "NaN", "0", "-0"}}}},
      {"G",
       {{0, {"1E+02", "1E+04", "0.0001", "0.1", "0.7", "+Inf", "-Inf", "NaN", "0", "-0"}},
        {1, {"1E+02", "1E+04", "0.0001", "0.1", "0.7", "+Inf", "-Inf", "NaN", "0", "-0"}},
        {-1, {"123", "12300", "0.000123", "0.125", "0.6666666666666666", "+Inf", "-Inf", "NaN", "0", "-0"}},
        {15, {"123", "12300", "0.000123", "0.125", "0.666666666666667", "+Inf", "-Inf", "NaN", "0", "-0"}}}},
      {"x",
       {{0, {"0x1p+07", "0x1p+14", "0x1p-13", "0x1p-03", "0x1p-01", "+Inf", "-Inf", "NaN", "0x0p+00", "-0x0p+00"}},
        {1,
         {"0x1.fp+06", "0x1.8p+13", "0x1.0p-13", "0x1.0p-03", "0x1.5p-01", "+Inf", "-Inf", "NaN",
          "0x0.0p+00", "-0x0.0p+00"}},
        {-1,
         {"0x1.ecp+06", "0x1.806p+13", "0x1.01f31f46ed246p-13", "0x1p-03", "0x1.5555555555555p-01",
          "+Inf", "-Inf", "NaN", "0x0p+00", "-0x0p+00"}},
        {15,
         {"0x1.ec0000000000000p+06", "0x1.806000000000000p+13", "0x1.01f31f46ed24600p-13",
          "0x1.000000000000000p-03", "0x1.555555555555500p-01", "+Inf", "-Inf", "NaN",
          "0x0.000000000000000p+00", "-0x0.000000000000000p+00"}}}},
      {"X",
       {{0, {"0X1P+07", "0X1P+14", "0X1P-13", "0X1P-03", "0X1P-01", "+Inf", "-Inf", "NaN", "0X0P+00", "-0X0P+00"}},
        {1,
         {"0X1.FP+06", "0X1.8P+13", "0X1.0P-13", "0X1.0P-03", "0X1.5P-01", "+Inf", "-Inf", "NaN",
          "0X0.0P+00", "-0X0.0P+00"}},
        {-1,
         {"0X1.ECP+06", "0X1.806P+13", "0X1.01F31F46ED246P-13", "0X1P-03", "0X1.5555555555555P-01",
          "+Inf", "-Inf", "NaN", "0X0P+00", "-0X0P+00"}},
        {15,
         {"0X1.EC0000000000000P+06", "0X1.806000000000000P+13", "0X1.01F31F46ED24600P-13",
          "0X1.000000000000000P-03", "0X1.555555555555500P-01", "+Inf", "-Inf", "NaN",
          "0X0.000000000000000P+00", "-0X0.000000000000000P+00"}}}},
  };
  int checked = 0;
  for (const auto& [format, precisions] : results) {
    for (const auto& [precision, expected] : precisions) {
      ASSERT_EQ(expected.size(), inputs.size());
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        SCOPED_TRACE(format + " " + std::to_string(precision) + " input " + std::to_string(i));
        auto got = call("floatToFormattedString", {inputs[i], format, std::int64_t{precision}});
        ASSERT_TRUE(got.ok()) << got.error().message();
        EXPECT_EQ(*got, expected[i]);
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 290);
}

TEST(ArcaflowFunctions, FloatToFormattedStringRefusesWhatGoWouldMangle) {
  auto bad_format = call("floatToFormattedString", {1.5, "q", std::int64_t{2}});
  ASSERT_FALSE(bad_format.ok());
  EXPECT_NE(bad_format.error().message().find("must be one of b, e, E, f, g, G, x, X"), std::string::npos)
      << bad_format.error().message();
  auto huge = call("floatToFormattedString", {1.5, "f", std::int64_t{1} << 40});
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message().find("10000"), std::string::npos) << huge.error().message();
  // A precision past 15 hex digits pads, and a big fixed precision is exact.
  auto wide = call("floatToFormattedString", {0.1, "f", std::int64_t{30}});
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(*wide, "0.100000000000000005551115123126");
}

// Test_bindConstants: each item paired with the constant, whatever its type.
TEST(ArcaflowFunctions, BindConstantsAsTheEngine) {
  const Json items = Json::parse(R"([{"loop_id": 1}, {"loop_id": 2}, {"loop_id": 3}])");
  // The Go test's fourth constant is a compiled regular expression, which JSON has no
  // counterpart of; a string stands for any other value.
  for (const Json& constant :
       {Json::parse(R"({"a": "A", "b": "B"})"), items, Json(2), Json("p([a-z]+)ch")}) {
    SCOPED_TRACE(constant.dump());
    auto got = call("bindConstants", {items, constant});
    ASSERT_TRUE(got.ok()) << got.error().message();
    Json want = Json::array();
    for (const auto& item : items) want.push_back({{"item", item}, {"constant", constant}});
    EXPECT_EQ(*got, want);
  }
  auto empty = call("bindConstants", {Json::array(), Json::parse(R"({"a": "A"})")});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, Json::array());
  auto not_list = call("bindConstants", {Json("abc"), Json(1)});
  ASSERT_FALSE(not_list.ok());
  EXPECT_NE(not_list.error().message().find("bindConstants: argument 1 must be a list, got a string"),
            std::string::npos)
      << not_list.error().message();
}

// Every value an expression makes is bounded (16 MiB, each item counted 16 bytes more):
// splitString of 4 MB into 4 M pieces, bindConstants copying a large constant to each item
// and '+' joining large strings are errors where they would be made, before they are.
TEST(ArcaflowFunctions, AValueAnExpressionMakesIsBounded) {
  const std::string big(4 << 20, 'a');
  for (const auto& [what, got] :
       {std::pair{"splitString", call("splitString", {big, ""})},
        std::pair{"bindConstants", call("bindConstants", {Json(std::vector<int>(1000, 1)),
                                                          Json(std::string(1 << 20, 'c'))})}}) {
    ASSERT_FALSE(got.ok()) << what;
    EXPECT_EQ(got.error().message().rfind(std::string(what) +
                                              " would make a value of more than 16 MiB (16777216 "
                                              "bytes, each item counted 16 more), the most a value "
                                              "an expression makes may hold at column 1",
                                          0),
              0u)
        << got.error().message();
  }
  auto joined = parseExpression("$.s + $.s + $.s + $.s + $.s");
  ASSERT_TRUE(joined.ok());
  auto five = joined->evaluate(Json{{"s", big}}, {});
  ASSERT_FALSE(five.ok());
  EXPECT_NE(five.error().message().find("'+' would make a value of more than 16 MiB"),
            std::string::npos)
      << five.error().message();
  // Under the bound, as before.
  auto pieces = call("splitString", {std::string(1 << 19, 'a'), ""});
  ASSERT_TRUE(pieces.ok()) << pieces.error().message();
  EXPECT_EQ(pieces->size(), std::size_t{1} << 19);
  auto three = parseExpression("$.s + $.s + $.s")->evaluate(Json{{"s", big}}, {});
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(three->get<std::string>().size(), 3 * big.size());
}

// TestGetEnvVarFunction: a variable that is set, and one that is not, which gives the default.
TEST(ArcaflowFunctions, GetEnvVarAsTheEngine) {
  ASSERT_EQ(::setenv("test_known_present_env_var_key", "known value", 1), 0);
  ASSERT_EQ(::unsetenv("test_known_not_present_env_var_key"), 0);
  auto present = call("getEnvVar", {"test_known_present_env_var_key", "default"});
  ASSERT_TRUE(present.ok());
  EXPECT_EQ(*present, "known value");
  auto missing = call("getEnvVar", {"test_known_not_present_env_var_key", "default"});
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(*missing, "default");
  // A caller may give the variables instead of the process environment.
  Context context;
  context.environment = [](const std::string& name) -> std::optional<std::string> {
    if (name == "ONLY") return "given";
    return std::nullopt;
  };
  auto given = call("getEnvVar", {"ONLY", "default"}, context);
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(*given, "given");
  auto hidden = call("getEnvVar", {"test_known_present_env_var_key", "default"}, context);
  ASSERT_TRUE(hidden.ok());
  EXPECT_EQ(*hidden, "default");
}

// The "readFile" and "readFile_nonexistent-file" cases: the engine's fixture
// fixtures/test-readFile/hello-world.yaml, read relative to the caller's directory.
TEST(ArcaflowFunctions, ReadFileRelativeToTheGivenDirectory) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir / "fixtures/test-readFile");
  dir.write("fixtures/test-readFile/hello-world.yaml", "hello: world\n");
  Context context;
  context.files_dir = dir.path();
  auto got = call("readFile", {"fixtures/test-readFile/hello-world.yaml"}, context);
  ASSERT_TRUE(got.ok()) << got.error().message();
  EXPECT_EQ(*got, "hello: world\n");
  // Widened (--read-outside-context), `..` is resolved as the engine's filepath.Abs does,
  // lexically, and an absolute path is taken as it is.
  std::filesystem::create_directories(dir / "workflow");
  context.files_dir = dir / "workflow";
  context.read_anywhere = true;
  auto up = call("readFile", {"../fixtures/test-readFile/hello-world.yaml"}, context);
  ASSERT_TRUE(up.ok()) << up.error().message();
  EXPECT_EQ(*up, "hello: world\n");
  auto absolute = call("readFile", {(dir / "fixtures/test-readFile/hello-world.yaml").string()}, context);
  ASSERT_TRUE(absolute.ok());
  context.read_anywhere = false;

  context.files_dir = dir.path();
  auto missing = call("readFile", {"fixtures/test-readFile/nonexistent-file.yaml"}, context);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("readFile: "), std::string::npos) << missing.error().message();
  EXPECT_NE(missing.error().message().find("nonexistent-file.yaml"), std::string::npos)
      << missing.error().message();
  // A directory is not a file.
  auto directory = call("readFile", {"fixtures"}, context);
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.error().message().find("fixtures"), std::string::npos);
}

// Not widened, readFile reads only what lies beneath the directory given: `..`, an
// absolute path and a symbolic link that lead out are refused naming the flag that widens
// it; a link that stays inside is followed.
TEST(ArcaflowFunctions, ReadFileStaysInTheGivenDirectory) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir / "context/sub");
  dir.write("secret", "outside\n");
  dir.write("context/sub/in.txt", "inside\n");
  std::filesystem::create_symlink("../secret", dir / "context/out-link");
  std::filesystem::create_symlink("/etc/passwd", dir / "context/absolute-link");
  std::filesystem::create_symlink("sub/in.txt", dir / "context/in-link");
  Context context;
  context.files_dir = dir / "context";
  for (const std::string& ok : std::vector<std::string>{
           "sub/in.txt", "in-link", "sub/../sub/in.txt", (dir / "context/sub/in.txt").string()}) {
    auto got = call("readFile", {ok}, context);
    ASSERT_TRUE(got.ok()) << ok << ": " << got.error().message();
    EXPECT_EQ(*got, "inside\n") << ok;
  }
  for (const std::string& refused :
       std::vector<std::string>{"../secret", "sub/../../secret", "out-link", "absolute-link",
                                (dir / "secret").string(), "/etc/passwd", "/proc/self/environ"}) {
    auto got = call("readFile", {refused}, context);
    ASSERT_FALSE(got.ok()) << refused << " read: " << *got;
    const std::string& message = got.error().message();
    EXPECT_EQ(message.rfind("readFile: " + refused + ": cannot read the file: it is outside " +
                                (dir / "context").string(),
                            0),
              0u)
        << message;
    EXPECT_NE(message.find("--read-outside-context"), std::string::npos) << message;
  }
  // A file missing inside is told as missing.
  auto missing = call("readFile", {"sub/none.txt"}, context);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("no such file"), std::string::npos)
      << missing.error().message();
}

// Arguments of the wrong type are refused by name (the engine refuses them when it loads
// the workflow; an integer is not a float there either).
TEST(ArcaflowFunctions, ArgumentsOfTheWrongTypeAreNamed) {
  auto ceil_int = call("ceil", {std::int64_t{1}});
  ASSERT_FALSE(ceil_int.ok());
  EXPECT_NE(ceil_int.error().message().find(
                "ceil: argument 1 must be a float, got an integer (convert it with intToFloat)"),
            std::string::npos)
      << ceil_int.error().message();
  auto to_string = call("intToString", {1.5});
  ASSERT_FALSE(to_string.ok());
  EXPECT_NE(to_string.error().message().find("intToString: argument 1 must be an integer, got a float"),
            std::string::npos)
      << to_string.error().message();
  auto split = call("splitString", {"a,b", std::int64_t{1}});
  ASSERT_FALSE(split.ok());
  EXPECT_NE(split.error().message().find("splitString: argument 2 must be a string"), std::string::npos);
  auto to_bool = call("boolToString", {"true"});
  ASSERT_FALSE(to_bool.ok());
}

// Go's syntax, where C's differs: strconv accepts what these show and refuses the rest.
TEST(ArcaflowFunctions, NumberSyntaxIsGos) {
  struct Text {
    const char* function;
    const char* text;
    Json want;  // null: an error
  };
  for (const auto& [function, text, want] : std::vector<Text>{
           {"stringToInt", "+5", std::int64_t{5}},
           {"stringToInt", " 5", nullptr},
           {"stringToInt", "9223372036854775807", kMaxInt},
           {"stringToInt", "-9223372036854775808", kMinInt},
           {"stringToInt", "9223372036854775808", nullptr},
           {"stringToFloat", "0x1p-2", 0.25},
           {"stringToFloat", "0x_1p-2", 0.25},
           {"stringToFloat", "0x1", nullptr},
           {"stringToFloat", "1_0", nullptr},
           {"stringToFloat", ".5", 0.5},
           {"stringToFloat", "5.", 5.0},
           {"stringToFloat", "infinity", kInf},
           {"stringToFloat", "-INFINITY", -kInf},
           {"stringToFloat", "nan", kNaN},
           {"stringToFloat", "-nan", nullptr},
           {"stringToFloat", " 1", nullptr},
           {"stringToFloat", "1e", nullptr},
           {"stringToFloat", "1e-400", 0.0},
           {"stringToBool", "tRuE", true},
           {"stringToBool", "yes", nullptr},
       }) {
    SCOPED_TRACE(std::string(function) + " " + text);
    auto got = call(function, {text});
    if (want.is_null()) {
      EXPECT_FALSE(got.ok()) << got->dump();
    } else {
      ASSERT_TRUE(got.ok()) << got.error().message();
      EXPECT_TRUE(same(want, *got));
    }
  }
}

// strings.ToLower/ToUpper map every Unicode letter; strings.Split with an empty separator
// splits into characters.
TEST(ArcaflowFunctions, StringsAreUnicode) {
  auto lower = call("toLower", {"ÉCOLE ΑΒΓ"});
  ASSERT_TRUE(lower.ok());
  EXPECT_EQ(*lower, "école αβγ");
  auto upper = call("toUpper", {"straße"});
  ASSERT_TRUE(upper.ok());
  EXPECT_EQ(*upper, "STRAßE");  // ß has no single upper-case letter: Go keeps it
  auto chars = call("splitString", {"añb", ""});
  ASSERT_TRUE(chars.ok());
  EXPECT_EQ(*chars, Json::array({"a", "ñ", "b"}));
  auto none = call("splitString", {"", ""});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, Json::array());
}

TEST(ArcaflowFunctions, TheEnginesListExactly) {
  EXPECT_EQ(functionNames(),
            (std::vector<std::string>{"abs", "bindConstants", "boolToString", "ceil", "floatToFormattedString",
                                      "floatToInt", "floatToString", "floor", "getEnvVar", "intToFloat",
                                      "intToString", "readFile", "round", "splitString", "stringToBool",
                                      "stringToFloat", "stringToInt", "toLower", "toUpper"}));
}

}  // namespace
}  // namespace plugboard::core::arcaflow

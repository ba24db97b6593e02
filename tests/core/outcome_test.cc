#include "core/launch/outcome.h"

#include <gtest/gtest.h>

#include "core/base/duration.h"
#include "tests/support/deep_json.h"

namespace plugboard::core {
namespace {

TEST(OutcomeTest, ParsesASuccessWithParameters) {
  auto o = parseOutcome(R"({"phase":"Succeeded","message":"ok",)"
                        R"("outputs":{"parameters":{"greeting":"hi"}}})",
                        "hello");
  EXPECT_EQ(o.phase, Phase::kSucceeded);
  EXPECT_EQ(o.message, "ok");
  EXPECT_EQ(o.outputs["parameters"]["greeting"], "hi");
  EXPECT_FALSE(o.requeue);
}

TEST(OutcomeTest, ParsesRunningWithRequeue) {
  auto o = parseOutcome(R"({"phase":"Running","requeue_ms":1500})", "slow");
  EXPECT_EQ(o.phase, Phase::kRunning);
  ASSERT_TRUE(o.requeue);
  EXPECT_EQ(o.requeue->count(), 1500);
}

TEST(OutcomeTest, TurnsAPluginsMistakeIntoAnErrorNamingIt) {
  for (const char* bad : {"nope", "[]", R"({"message":"x"})", R"({"phase":"Done"})",
                          R"({"phase":"Succeeded","outputs":{"parameters":{"n":1}}})",
                          R"({"phase":"Running","requeue_ms":-1})"}) {
    auto o = parseOutcome(bad, "sloppy");
    EXPECT_EQ(o.phase, Phase::kError) << bad;
    EXPECT_NE(o.message.find("plugin 'sloppy' returned an invalid result"), std::string::npos)
        << o.message;
  }
}

TEST(OutcomeTest, RefusesAResultNestedBeyondTheLimit) {
  const std::string deep = R"({"phase":"Succeeded","outputs":{"x":)" +
                           plugboard::testing::nestedArrays(plugboard::testing::kStackBreakingDepth) + "}}";
  const Outcome o = parseOutcome(deep, "deep");
  EXPECT_EQ(o.phase, Phase::kError);
  EXPECT_EQ(o.message, "plugin 'deep' returned an invalid result: nested deeper than 512 levels");
  EXPECT_EQ(o.toJson()["outputs"], Json::object());
}

// A requeue delay the clock cannot add to a time point is the plugin's mistake.
TEST(OutcomeTest, RefusesARequeueBeyondAHundredYears) {
  const Outcome o = parseOutcome(R"({"phase":"Running","requeue_ms":9223372036854775807})", "slow");
  EXPECT_EQ(o.phase, Phase::kError);
  EXPECT_EQ(o.message, "plugin 'slow' returned an invalid result: 'requeue_ms' is longer than 100 years");
  EXPECT_EQ(parseOutcome(R"({"phase":"Running","requeue_ms":3153600000000})", "slow").requeue,
            kMaxDuration);
}

TEST(OutcomeTest, RefusesAResultHoldingANulByte) {
  using namespace std::string_literals;
  const Outcome o = parseOutcome(R"({"phase":"Succeeded"})"s + '\0' + "x", "nul");
  EXPECT_EQ(o.phase, Phase::kError);
  EXPECT_EQ(o.message, "plugin 'nul' returned an invalid result: it holds a NUL byte, which JSON never does");
}

}  // namespace
}  // namespace plugboard::core

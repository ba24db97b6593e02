#include "core/workflows/run_report.h"

#include <cstdio>

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

std::string written(const RunReport& report) {
  std::FILE* f = std::tmpfile();
  report.writeJson(f);
  std::string text(static_cast<std::size_t>(std::ftell(f)), '\0');
  std::rewind(f);
  EXPECT_EQ(std::fread(text.data(), 1, text.size(), f), text.size());
  std::fclose(f);
  return text;
}

TEST(RunReportTest, WrittenJsonIsTheTextOfToJson) {
  RunReport report;
  report.workflow = "wf \"quoted\"";
  EXPECT_EQ(written(report), report.toJson().dump(2));  // no steps

  const auto t0 = std::chrono::steady_clock::now();
  StepStatus a;
  a.id = "a";
  a.phase = StepPhase::kSucceeded;
  a.message = "line one\nline two, \"quoted\", é";
  a.outputs.set({{"text", "x\ny"}, {"n", "2"}, {"list", Json::array({"1", "z"})}});
  a.attempts = 2;
  a.calls = 3;
  a.plugin = "echo@1.0.0";
  a.started = t0;
  a.finished = t0 + std::chrono::milliseconds(1500);
  StepStatus b;
  b.id = "b";
  b.phase = StepPhase::kSkipped;
  b.message = "dependency 'a' Failed";
  StepStatus c = b;
  c.id = "c";
  c.outputs.set({});
  report.steps = {a, b, c};
  report.outputs = {{"list", Json::array({1, Json::object(), "z"})}, {"text", "x\ny"}};
  report.cancelled = true;
  report.abandoned = 1;
  report.duration = std::chrono::milliseconds(1234);
  EXPECT_EQ(written(report), report.toJson().dump(2));
}

// A step's and a node's LogLines hold nothing until a line comes (a run has one per node
// and step); a copy has lines of its own.
TEST(RunReportTest, LogLinesStartEmptyAndCopiesKeepTheirOwnLines) {
  LogLines none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.total(), 0u);
  EXPECT_EQ(none.dropped(), 0u);
  EXPECT_TRUE(none.lines().empty());
  EXPECT_EQ(none.toJson(), nlohmann::json::array());

  LogLines a;
  a.add(1, "first");
  LogLines b = a;
  b.add(3, "second");
  ASSERT_EQ(a.lines().size(), 1u);
  ASSERT_EQ(b.lines().size(), 2u);
  EXPECT_EQ(b.lines()[1].text, "second");
  a = b;
  b = none;
  EXPECT_EQ(a.total(), 2u);
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(b.lines().empty());

  // Past kMaxLines the oldest go, counted as dropped, here and in what appends them.
  LogLines many;
  for (int i = 0; i < 150; ++i) many.add(1, "line " + std::to_string(i));
  EXPECT_EQ(many.total(), 150u);
  EXPECT_EQ(many.dropped(), 50u);
  EXPECT_EQ(many.lines().front().text, "line 50");
  LogLines appended;
  appended.append(many);
  EXPECT_EQ(appended.total(), 150u);
  EXPECT_EQ(appended.dropped(), 50u);
  LogLines since;
  since.appendSince(many, 149);
  ASSERT_EQ(since.lines().size(), 1u);
  EXPECT_EQ(since.lines()[0].text, "line 149");
  EXPECT_EQ(since.dropped(), 0u);
}

TEST(RunReportTest, StepOutputsAreInNameOrderAndTheLastOfANameWins) {
  StepOutputs outputs;
  EXPECT_EQ(outputs.toJson(), Json::object());  // not succeeded: no parameters at all
  outputs.set({{"b", "1"}, {"a", "2"}, {"b", "3"}});
  EXPECT_EQ(outputs.toJson().dump(), R"({"parameters":{"a":"2","b":"3"}})");
  outputs.set({});
  EXPECT_EQ(outputs.toJson().dump(), R"({"parameters":{}})");
}

}  // namespace
}  // namespace plugboard::core

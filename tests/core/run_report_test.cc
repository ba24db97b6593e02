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

// The TOML front end (core/frontends/toml_workflow.h): a TOML workflow as the one model,
// its shape and tags, and run on the engine (virtual clock, tests/core/engine_harness.h).
#include "core/frontends/toml_workflow.h"

#include <algorithm>
#include <cstdio>
#include <functional>

#include <gtest/gtest.h>

#include "core/workflows/step_report.h"
#include "tests/core/engine_harness.h"

namespace plugboard::testing {
namespace {

core::WorkflowModel modelOf(const std::string& text) {
  auto loaded = core::parseWorkflow(text, "wf.toml");
  for (const auto& p : loaded.problems) ADD_FAILURE() << p.oneLine();
  return loaded.workflow ? core::tomlModel(*loaded.workflow) : core::WorkflowModel{};
}

using TomlModelTest = EngineTest;

// What `write` writes to a file.
std::string written(const std::function<void(std::FILE*)>& write) {
  std::FILE* f = std::tmpfile();
  write(f);
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  std::fclose(f);
  return text;
}

// The report `plugboard run --output json` writes a step at a time (each step's status
// made from the nodes as it is written), which must be the one made whole.
std::string streamedReport(const core::WorkflowModel& model, const core::RunResult& r) {
  core::StepReporter whole(model, nullptr), streamed(model, nullptr);
  core::RunResult copy = r;
  const std::string want =
      written([&](std::FILE* f) { whole.report(std::move(copy)).writeJson(f); });
  core::RunReport outcome;
  const std::string got =
      written([&](std::FILE* f) { outcome = streamed.writeJson(core::RunResult(r), f); });
  EXPECT_EQ(got, want);
  EXPECT_TRUE(outcome.steps.empty());
  EXPECT_EQ(outcome.succeeded(), r.phase == NodePhase::kSucceeded);
  return got;
}

TEST_F(TomlModelTest, StepsBecomeADagOfPluginTemplatesWithTags) {
  const auto model = modelOf(R"(name = "wf"
[inputs]
mode = "fast"
[[steps]]
id = "main"
plugin = "hello@1"
rpc = "greet"
args = { who = "${inputs.mode}", raw = "{{x}} $${y}" }
retry = { limit = 2, backoff = "1s", factor = 3 }
timeout = "5s"
[[steps]]
id = "b"
plugin = "echo"
depends = ["main"]
when = "${inputs.mode} == fast"
items = "${steps.main.outputs.parameters.list}"
parameters = { p = "${item}" }
[[steps]]
id = "bye"
plugin = "echo"
exit = true
[outputs]
out = "${steps.main.outputs.parameters.x}"
)");
  EXPECT_TRUE(core::checkModel(model).empty());
  EXPECT_EQ(model.entrypoint, "main-");  // a step takes the name "main"
  EXPECT_EQ(model.on_exit, "exit");
  ASSERT_EQ(model.templates.size(), 5u);
  const core::Template& dag = *model.find("main-");
  ASSERT_EQ(dag.tasks.size(), 2u);
  EXPECT_EQ(dag.tasks[1].depends, "main");
  EXPECT_EQ(dag.tasks[1].when, "{{workflow.parameters.mode}} == fast");
  EXPECT_EQ(dag.tasks[1].loop->kind, core::Loop::Kind::kParam);
  EXPECT_EQ(dag.tasks[1].loop->param, "{{tasks.main.outputs.parameters.list}}");
  ASSERT_EQ(dag.outputs.size(), 1u);
  EXPECT_EQ(dag.outputs[0].source, "{{tasks.main.outputs.parameters.x}}");
  EXPECT_EQ(dag.outputs[0].global_name, "out");
  const core::Template& step = *model.find("main");
  EXPECT_EQ(step.plugin.key, "hello");
  EXPECT_EQ(step.plugin.version, "1");
  EXPECT_EQ(step.plugin.rpc, "greet");
  // The step's args are on its task (templates are shared by steps).
  EXPECT_EQ(dag.tasks[0].plugin_args["who"], "{{workflow.parameters.mode}}");
  EXPECT_EQ(dag.tasks[0].plugin_args["raw"], R"({{="{{"}}x}} ${y})");
  EXPECT_TRUE(dag.tasks[0].names_leaf);
  ASSERT_TRUE(step.retry.has_value());
  EXPECT_EQ(step.retry->limit, "2");
  EXPECT_EQ(step.retry->factor, 3);
  EXPECT_EQ(step.timeout, "5000ms");
  EXPECT_EQ(model.find("exit")->tasks.at(0).name, "bye");
}

TEST_F(TomlModelTest, ThePluginGetsTheTemplateATomlStepAlwaysSent) {
  leaves_.plan("first", {LeafAnswer::ok({{"parameters", {{"list", R"(["a","b"])"}}}})});
  auto r = run(modelOf(R"(name = "wf"
[[steps]]
id = "first"
plugin = "echo"
args = { list = '["a", "b"]' }
[[steps]]
id = "each"
plugin = "echo"
depends = ["first"]
items = [1, 2]
parameters = { value = 1, item = "${item}" }
args = { from = "${steps.first.outputs.parameters.list}", item = "${item}" }
)"));
  EXPECT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
  auto records = leaves_.records("each");
  ASSERT_EQ(records.size(), 2u);
  // The two items run at once: their calls are recorded in either order.
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
    return a.inputs["item"].dump() < b.inputs["item"].dump();
  });
  // The parameters, as text, in the template; the arguments that carry the args'
  // references are not listed there.
  EXPECT_EQ(records[0].filled,
            core::Json::parse(R"({"name":"each","inputs":{"parameters":[
                {"name":"item","value":"1"},{"name":"value","value":"1"}]}})"));
  EXPECT_EQ(records[1].inputs["item"], "2");
  EXPECT_EQ(records[1].inputs["ref0"], R"(["a","b"])");  // what `from` names, carried
}

TEST_F(TomlModelTest, StepsCallingOnePluginAlikeShareATemplateNamedAsEachStepWhenSent) {
  const auto model = modelOf(R"(name = "wf"
[[steps]]
id = "a"
plugin = "echo"
args = { v = "1" }
[[steps]]
id = "b"
plugin = "echo"
depends = ["a"]
args = { v = "${steps.a.outputs.parameters.v}" }
[[steps]]
id = "c"
plugin = "echo"
depends = ["a"]
args = { w = "${steps.a.outputs.parameters.v}!" }
[[steps]]
id = "d"
plugin = "echo"
timeout = "5s"
)");
  EXPECT_TRUE(core::checkModel(model).empty());
  // main; a and d (no inputs, another timeout); b and c share b's (one carried reference).
  ASSERT_EQ(model.templates.size(), 4u);
  const core::Template& dag = *model.find("main");
  ASSERT_EQ(dag.tasks.size(), 4u);
  EXPECT_EQ(dag.tasks[0].template_name, "a");
  EXPECT_EQ(dag.tasks[1].template_name, "b");
  EXPECT_EQ(dag.tasks[2].template_name, "b");
  EXPECT_EQ(dag.tasks[3].template_name, "d");
  EXPECT_EQ(dag.tasks[2].plugin_args["w"], "{{inputs.parameters.ref0}}!");

  leaves_.plan("a", {LeafAnswer::ok({{"parameters", {{"v", "x"}}}})});
  auto r = run(model);
  EXPECT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
  auto records = leaves_.records("b");
  ASSERT_EQ(records.size(), 2u);
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
    return a.filled["name"] < b.filled["name"];
  });
  // Each plugin gets its step's name and args, as from a template of its own.
  EXPECT_EQ(records[0].filled, core::Json::parse(R"({"name":"b"})"));
  EXPECT_EQ(records[1].filled, core::Json::parse(R"({"name":"c"})"));
  EXPECT_EQ(records[0].args, core::Json::parse(R"({"v":"x"})"));
  EXPECT_EQ(records[1].args, core::Json::parse(R"({"w":"x!"})"));
}

TEST_F(TomlModelTest, RetriesWaitBackoffTimesFactorAndAtMostAHundredYears) {
  leaves_.plan("flaky", {LeafAnswer::failed("one"), LeafAnswer::failed("two"),
                         LeafAnswer::failed("three")});
  auto r = run(modelOf(R"(name = "wf"
[[steps]]
id = "flaky"
plugin = "p"
retry = { limit = 2, backoff = "1h", factor = 1e9 }
)"));
  EXPECT_EQ(r.phase, NodePhase::kFailed);
  const Millis hour = std::chrono::hours(1);
  EXPECT_EQ(leaves_.times("flaky"),
            (std::vector<Millis>{Millis(0), hour, hour + core::kMaxDuration}));
}

TEST_F(TomlModelTest, TheReportWrittenAStepAtATimeIsTheReportMadeWhole) {
  // Plain steps (their nodes go as each is written): one fails, one is omitted because
  // of it, one is skipped by its `when`, one passes an output on.
  leaves_.plan("bad", {LeafAnswer::failed("boom")});
  auto r = run(modelOf(R"(name = "wf"
[[steps]]
id = "a"
plugin = "p"
args = { text = "hi" }
[[steps]]
id = "b"
plugin = "p"
args = { text = "${steps.a.outputs.parameters.text}" }
depends = ["a"]
[[steps]]
id = "bad"
plugin = "q"
[[steps]]
id = "after"
plugin = "p"
depends = ["bad"]
[[steps]]
id = "never"
plugin = "p"
when = "1 == 2"
)"));
  EXPECT_EQ(r.phase, NodePhase::kFailed);
  const std::string plain = streamedReport(model_, r);
  EXPECT_NE(plain.find("\"message\": \"dependency 'bad' Failed\""), std::string::npos) << plain;
  EXPECT_NE(plain.find("\"message\": \"boom\""), std::string::npos) << plain;

  // A loop (its items' outputs gathered) and a retry that gives up (its last attempt's
  // reason): their nodes are read by id.
  leaves_.plan("flaky", {LeafAnswer::failed("one"), LeafAnswer::failed("two")});
  r = run(modelOf(R"(name = "wf"
[[steps]]
id = "each"
plugin = "p"
items = ["x", "y"]
args = { text = "${item}" }
[[steps]]
id = "flaky"
plugin = "q"
retry = { limit = 1 }
)"));
  const std::string read_again = streamedReport(model_, r);
  EXPECT_NE(read_again.find("\"message\": \"two\""), std::string::npos) << read_again;
  EXPECT_NE(read_again.find("\"attempts\": 2"), std::string::npos) << read_again;
  EXPECT_NE(read_again.find("\"y\""), std::string::npos) << read_again;
}

}  // namespace
}  // namespace plugboard::testing

// TOML workflows on the one model's engine: `when`, loops (`items`), exit steps and
// workflow outputs ([outputs]), run through the real binary on real plugin files, and the
// bad input of each refused by `validate` with file:line.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/plugin_dir.h"
#include "tests/support/run_report.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

class RunTomlTest : public TomlRunFixture {
 protected:
  // `validate` of `workflow`, which must be refused: its one line of problems.
  std::string refused(const std::string& workflow) {
    const std::string file = dir_.write("bad.toml", workflow);
    auto r = plugboard({"validate", file, "--plugins", dir_.plugins()});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_EQ(r.err.rfind(file + ":", 0), 0u) << r.err;
    return r.err;
  }
};

constexpr char kWhen[] = R"(name = "wf"
[inputs]
mode = "slow"
[[steps]]
id = "fast"
plugin = "echo"
when = "${inputs.mode} == fast"
[[steps]]
id = "always"
plugin = "echo"
args = { mode = "${inputs.mode}" }
)";

TEST_F(RunTomlTest, WhenSkipsAStepAndTheWorkflowStillSucceeds) {
  auto report = runJson(kWhen);
  EXPECT_EQ(last_.exit_code, 0) << last_.out;
  EXPECT_EQ(report["succeeded"], true);
  EXPECT_EQ(reportStep(report, "fast")["phase"], "Skipped");
  EXPECT_EQ(reportStep(report, "fast")["message"], "when 'slow == fast' evaluated false");
  EXPECT_EQ(reportStep(report, "fast")["attempts"], 0);
  EXPECT_EQ(reportStep(report, "always")["phase"], "Succeeded");

  report = runJson(std::string(kWhen) + R"([[steps]]
id = "after-fast"
plugin = "echo"
depends = ["fast"]
[[steps]]
id = "after-both"
plugin = "echo"
depends = ["fast", "broken"]
[[steps]]
id = "broken"
plugin = "fail"
)");
  // As Argo's depends: a task skipped by its `when` counts as done, a failed one does not.
  EXPECT_EQ(reportStep(report, "after-fast")["phase"], "Succeeded");
  EXPECT_EQ(reportStep(report, "after-both")["phase"], "Skipped");
  EXPECT_EQ(reportStep(report, "after-both")["message"], "dependency 'broken' Failed");

  report = runJson(kWhen, {"--param", "mode=fast"});
  EXPECT_EQ(reportStep(report, "fast")["phase"], "Succeeded");
  EXPECT_EQ(reportStep(report, "fast")["attempts"], 1);
}

TEST_F(RunTomlTest, ItemsRunAStepPerItemAndGatherItsOutputsAsAList) {
  auto report = runJson(R"(name = "wf"
[[steps]]
id = "list"
plugin = "echo"
args = { names = '["x", "y"]' }
[[steps]]
id = "each"
plugin = "echo"
items = [{ n = "a" }, { n = "b" }, { n = "c" }]
args = { name = "${item.n}", whole = "${item}" }
[[steps]]
id = "from-output"
plugin = "echo"
depends = ["list"]
items = "${steps.list.outputs.parameters.names}"
args = { name = "${item}!" }
[[steps]]
id = "after"
plugin = "echo"
depends = ["each"]
args = { all = "${steps.each.outputs.parameters.name}" }
)");
  EXPECT_EQ(last_.exit_code, 0) << last_.out;
  EXPECT_EQ(reportStep(report, "each")["phase"], "Succeeded");
  EXPECT_EQ(reportStep(report, "each")["attempts"], 3);
  EXPECT_EQ(reportStep(report, "each")["outputs"]["parameters"]["name"], Json({"a", "b", "c"}));
  EXPECT_EQ(reportStep(report, "each")["outputs"]["parameters"]["whole"][0], R"({"n":"a"})");
  EXPECT_EQ(reportStep(report, "from-output")["outputs"]["parameters"]["name"],
            Json({"x!", "y!"}));
  EXPECT_EQ(Json::parse(reportStep(report, "after")["outputs"]["parameters"]["all"].get<std::string>()),
            Json({"a", "b", "c"}));
}

TEST_F(RunTomlTest, AnExitStepRunsAfterAFailureAndSeesTheWorkflowStatus) {
  auto report = runJson(R"(name = "wf"
[[steps]]
id = "broken"
plugin = "fail"
args = { message = "no luck" }
[[steps]]
id = "cleanup"
plugin = "echo"
exit = true
args = { status = "${workflow.status}" }
)");
  EXPECT_EQ(last_.exit_code, 1);
  EXPECT_EQ(reportStep(report, "broken")["phase"], "Failed");
  EXPECT_EQ(reportStep(report, "cleanup")["phase"], "Succeeded");
  EXPECT_EQ(reportStep(report, "cleanup")["outputs"]["parameters"]["status"], "Failed");

  report = runJson(R"(name = "wf"
[[steps]]
id = "fine"
plugin = "echo"
[[steps]]
id = "cleanup"
plugin = "echo"
exit = true
args = { status = "${workflow.status}" }
)");
  EXPECT_EQ(last_.exit_code, 0);
  EXPECT_EQ(reportStep(report, "cleanup")["outputs"]["parameters"]["status"], "Succeeded");
}

TEST_F(RunTomlTest, WorkflowOutputsComeFromStepOutputs) {
  const std::string wf = R"(name = "wf"
[outputs]
greeting = "${steps.greet.outputs.parameters.text}"
[[steps]]
id = "greet"
plugin = "echo"
args = { text = "hi there" }
)";
  auto report = runJson(wf);
  EXPECT_EQ(last_.exit_code, 0) << last_.out;
  EXPECT_EQ(report["outputs"], Json({{"greeting", "hi there"}}));
  auto r = plugboard({"run", dir_.write("wf.toml", wf), "--plugins", dir_.plugins()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("output greeting = hi there\n"), std::string::npos) << r.out;
}

TEST_F(RunTomlTest, ReferencesFillAsTheyAlwaysDid) {
  // A whole reference keeps the input's type: `fail` takes its message only from a string,
  // so a number gives its own; spliced references are text; "{{" is no tag; "$${" is "${".
  auto report = runJson(R"(name = "wf"
[inputs]
n = 3
[[steps]]
id = "typed"
plugin = "fail"
args = { message = "${inputs.n}" }
[[steps]]
id = "probe"
plugin = "echo"
args = { text = "n=${inputs.n} {{not a tag}} $${inputs.n} in ${workflow.name}" }
)");
  EXPECT_EQ(reportStep(report, "typed")["message"], "failed as asked");
  EXPECT_EQ(reportStep(report, "probe")["outputs"]["parameters"]["text"],
            "n=3 {{not a tag}} ${inputs.n} in wf");
}

TEST_F(RunTomlTest, ALongChainIsSkippedThroughAfterItsFirstStepFailed) {
  std::string wf = "name = \"line\"\n[[steps]]\nid = \"s0\"\nplugin = \"fail\"\n";
  const int n = 3000;
  for (int i = 1; i < n; ++i) {
    wf += "[[steps]]\nid = \"s" + std::to_string(i) + "\"\nplugin = \"echo\"\ndepends = [\"s" +
          std::to_string(i - 1) + "\"]\n";
  }
  auto report = runJson(wf);
  EXPECT_EQ(last_.exit_code, 1);
  ASSERT_EQ(report["steps"].size(), static_cast<std::size_t>(n));
  EXPECT_EQ(report["steps"].back()["phase"], "Skipped");
  EXPECT_EQ(report["steps"].back()["message"], "dependency 's2998' Skipped");
}

TEST_F(RunTomlTest, BadUsesOfTheNewKeysAreRefusedWithFileAndLine) {
  EXPECT_NE(refused("name = \"wf\"\n[[steps]]\nid = \"a\"\nplugin = \"echo\"\nwhen = 3\n")
                .find(":5:8: step 'a': 'when' must be a string"),
            std::string::npos);
  EXPECT_NE(refused("name = \"wf\"\n[[steps]]\nid = \"a\"\nplugin = \"echo\"\nitems = 3\n")
                .find(":5:9: step 'a': 'items' must be a list"),
            std::string::npos);
  EXPECT_NE(refused("name = \"wf\"\n[[steps]]\nid = \"a\"\nplugin = \"echo\"\nexit = \"yes\"\n")
                .find(":5:8: step 'a': 'exit' must be true or false"),
            std::string::npos);
  EXPECT_NE(refused("name = \"wf\"\n[[steps]]\nid = \"a\"\nplugin = \"echo\"\n"
                    "args = { x = \"${item}\" }\n")
                .find(":2:1: step 'a': ${item}: the step has no 'items'"),
            std::string::npos);
  EXPECT_NE(refused("name = \"wf\"\n[[steps]]\nid = \"a\"\nplugin = \"echo\"\n"
                    "args = { x = \"${workflow.status}\" }\n")
                .find("step 'a': ${workflow.status}: only an exit step"),
            std::string::npos);
  EXPECT_NE(refused("name = \"wf\"\n[[steps]]\nid = \"done\"\nplugin = \"echo\"\nexit = true\n"
                    "[[steps]]\nid = \"b\"\nplugin = \"echo\"\ndepends = [\"done\"]\n")
                .find(":6:1: step 'b': depends on exit step 'done'"),
            std::string::npos);
  EXPECT_NE(refused("name = \"wf\"\n[[steps]]\nid = \"done\"\nplugin = \"echo\"\nexit = true\n"
                    "depends = [\"b\"]\n[[steps]]\nid = \"b\"\nplugin = \"echo\"\n")
                .find(":2:1: step 'done': an exit step runs after every other step"),
            std::string::npos);
  EXPECT_NE(refused("name = \"wf\"\n[outputs]\nx = \"${steps.nope.outputs.parameters.y}\"\n"
                    "[[steps]]\nid = \"a\"\nplugin = \"echo\"\n")
                .find(":3:1: output 'x': ${steps.nope.outputs.parameters.y}: there is no step 'nope'"),
            std::string::npos);
  EXPECT_NE(refused("name = \"wf\"\n[outputs]\nx = \"plain\"\n[[steps]]\nid = \"a\"\nplugin = \"echo\"\n")
                .find(":3:1: output 'x': must refer to a step's output"),
            std::string::npos);
  EXPECT_NE(refused("name = \"wf\"\noutputs = 3\n[[steps]]\nid = \"a\"\nplugin = \"echo\"\n")
                .find(":2:11: 'outputs' must be a table"),
            std::string::npos);
  EXPECT_NE(refused("name = \"wf\"\n[[steps]]\nid = \"a\"\nplugin = \"echo\"\nwhen = \"${inputs.x} == 1\"\n")
                .find("step 'a': ${inputs.x}: the workflow has no input 'x'"),
            std::string::npos);
  EXPECT_NE(refused("name = \"wf\"\n[[steps]]\nid = \"a\"\nplugin = \"echo\"\nwhen = \"${bad.ref}\"\n")
                .find("step 'a': when: bad reference '${bad.ref}'"),
            std::string::npos);
}

}  // namespace
}  // namespace plugboard::testing

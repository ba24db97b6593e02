// What `plugboard run` shows of a TOML workflow's steps, through the real binary on the
// bundled plugins: each step's plugin log lines (kept with the step whatever the log level,
// shown under a failed step, in the JSON report, `--logs STEP`), its output parameters and
// the deployer that ran it, the live table on a terminal (also beside --output json) and a
// terminal left clean by Ctrl-C.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/examples.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/plugin_dir.h"
#include "tests/support/pty.h"
#include "tests/support/run_report.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

class RunOutputTest : public TomlRunFixture {
 protected:
  TempDir scratch_;  // a copy of an example this build needs changed
};

std::string example(const char* name) { return (sourceDir() / "examples" / name).string(); }

bool hasLine(const Json& logs, const std::string& level, const std::string& text) {
  return std::any_of(logs.begin(), logs.end(),
                     [&](const Json& l) { return l["level"] == level && l["text"] == text; });
}

std::size_t rowsHolding(const std::vector<std::string>& lines, const std::string& text) {
  return static_cast<std::size_t>(std::count_if(lines.begin(), lines.end(), [&](const auto& l) {
    return l.find(text) != std::string::npos;
  }));
}

TEST_F(RunOutputTest, PluginLogLinesAreKeptWithTheirStepAtTheDefaultLogLevel) {
  // greet runs in a child process (deployer process), shout and count in this one (native).
  auto r = plugboard({"run", runnableDeployersExample(scratch_.path()), "--plugins", pluginDir().string(),
                      "--param", "who=Ada", "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json report = Json::parse(r.out);
  const Json greet = reportStep(report, "greet");
  EXPECT_EQ(greet["deployer"], "process");
  EXPECT_TRUE(hasLine(greet["logs"], "info", "[hello] greeting Ada")) << greet;
  EXPECT_EQ(greet["logs_dropped"], 0);
  EXPECT_EQ(reportStep(report, "shout")["deployer"], "native");
  EXPECT_EQ(reportStep(report, "shout")["logs"], Json::array());
  EXPECT_EQ(reportStep(report, "count")["deployer"], "process");
  // Info is below the default log level: kept with the step, not printed.
  EXPECT_EQ(r.err.find("greeting Ada"), std::string::npos) << r.err;

  // In the runtime's process, a line written on the thread of the call.
  r = plugboard({"run", example("hello.toml"), "--plugins", pluginDir().string(), "--param",
                 "who=Bob", "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json native = reportStep(Json::parse(r.out), "greet");
  EXPECT_EQ(native["deployer"], "native");
  EXPECT_TRUE(hasLine(native["logs"], "info", "[hello] greeting Bob")) << native;
}

TEST_F(RunOutputTest, TheRuntimesLogNamesTheStepOfEachPluginLine) {
  auto r = plugboard({"run", runnableDeployersExample(scratch_.path()), "--plugins", pluginDir().string(),
                      "--param", "who=Ada", "--log-level", "info"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.err.find("[process] step greet: [hello] greeting Ada"), std::string::npos) << r.err;
  r = plugboard({"run", example("hello.toml"), "--plugins", pluginDir().string(), "--param",
                 "who=Ada", "--log-level", "info"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.err.find("[native] step greet: [hello] greeting Ada"), std::string::npos) << r.err;
}

TEST_F(RunOutputTest, PythonAndArcaflowStepsKeepTheirLinesToo) {
  // A Python plugin in its child process (its SDK sends the call's id with each line) and an
  // Arcaflow plugin (its debug log comes with its answer).
  TempDir cache;
  RunOptions options;
  options.env = {"XDG_CACHE_HOME=" + cache.path().string()};
  auto r = plugboard({"run", example("arcaflow.toml"), "--plugins", pluginDir().string(),
                      "--registry", example("registry.toml"), "--param", "who=Ada", "--output",
                      "json"},
                     options);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json report = Json::parse(r.out);
  const Json python = reportStep(report, "python");
  EXPECT_EQ(python["deployer"], "python");
  ASSERT_FALSE(python["logs"].empty()) << python;
  EXPECT_NE(python["logs"][0]["text"].get<std::string>().find("greeting Welcome"),
            std::string::npos)
      << python;
  const Json atp = reportStep(report, "arcaflow");
  EXPECT_EQ(atp["deployer"], "atp");
  ASSERT_FALSE(atp["logs"].empty()) << atp;
  EXPECT_NE(atp["logs"].dump().find("greeted Hello, Ada!"), std::string::npos) << atp;
}

TEST_F(RunOutputTest, AFailedStepShowsItsLinesAndLogsShowsAnyStep) {
  const std::string wf = dir_.write("wf.toml", R"(name = "wf"
[[steps]]
id = "broken"
plugin = "scripted"
args = { log = "about to fail", phase = "Failed", message = "no luck" }
[[steps]]
id = "fine"
plugin = "scripted"
args = { log = "all is well" }
)");
  auto r = plugboard({"run", wf, "--plugins", dir_.plugins()});
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_NE(r.out.find("logs of step 'broken' (scripted@"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" via native):\n  info  [scripted] about to fail\n"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("all is well"), std::string::npos) << r.out;  // it succeeded

  r = plugboard({"run", wf, "--plugins", dir_.plugins(), "--logs", "fine"});
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_NE(r.out.find("logs of step 'fine' (scripted@"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  info  [scripted] all is well\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("about to fail"), std::string::npos) << r.out;  // only the one asked

  r = plugboard({"run", wf, "--plugins", dir_.plugins(), "--logs", "fnie"});
  EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
  EXPECT_EQ(r.err, "plugboard: --logs: workflow 'wf' has no step 'fnie'; did you mean 'fine'?\n");
  EXPECT_EQ(r.out, "");  // nothing ran

  const std::string yaml = dir_.write("wf.yaml", R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  entrypoint: main
  templates:
  - name: main
    suspend: {}
)");
  r = plugboard({"run", yaml, "--plugins", dir_.plugins(), "--logs", "main"});
  EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
  EXPECT_EQ(r.err, "plugboard: --logs names a step of a TOML workflow; " + yaml + " is not one\n");
}

TEST_F(RunOutputTest, AChattyPluginKeepsItsLastLinesAndCountsTheRest) {
  const Json report = runJson(R"(name = "wf"
[[steps]]
id = "chatty"
plugin = "scripted"
args = { log = "line", log_times = 250 }
)");
  const Json chatty = reportStep(report, "chatty");
  ASSERT_EQ(chatty["logs"].size(), 100u) << chatty;  // LogLines::kMaxLines, as documented
  EXPECT_EQ(chatty["logs"][0]["text"], "[scripted] line 151");
  EXPECT_EQ(chatty["logs"][99]["text"], "[scripted] line 250");
  EXPECT_EQ(chatty["logs_dropped"], 150);
  // A long line is cut (LogLines::kMaxLineBytes).
  const Json cut = reportStep(runJson("name = \"wf\"\n[[steps]]\nid = \"long\"\nplugin = "
                                      "\"scripted\"\nargs = { log = \"" +
                                      std::string(5000, 'x') + "\" }\n"),
                              "long");
  ASSERT_EQ(cut["logs"].size(), 1u);
  EXPECT_LT(cut["logs"][0]["text"].get<std::string>().size(), 1100u);
  EXPECT_TRUE(cut["logs"][0]["text"].get<std::string>().ends_with("x [cut]"));
}

TEST_F(RunOutputTest, TheTextOutputShowsOutputsDeployersAndTheWorkflowsOutputs) {
  const std::string wf = dir_.write("wf.toml", R"(name = "wf"
[[steps]]
id = "greet"
plugin = "hello"
args = { name = "Ada" }
[outputs]
said = "${steps.greet.outputs.parameters.greeting}"
)");
  auto r = plugboard({"run", wf, "--plugins", dir_.plugins()});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("step greet: Succeeded in "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" via native): Hello, Ada!; greeting=Hello, Ada!\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("workflow 'wf' Succeeded in "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" (1 step)\noutput said = Hello, Ada!\n"), std::string::npos) << r.out;
}

TEST_F(RunOutputTest, OnATerminalTheFinalTableShowsOutputsAndDeployers) {
  auto r = runInPty({binary().string(), "run", example("hello.toml"), "--plugins",
                     pluginDir().string(), "--param", "who=Ada"},
                    {});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto lines = Screen(r.output, 80).lines();
  ASSERT_EQ(rowsHolding(lines, "  greet "), 1u) << Screen(r.output, 80).text();
  const std::string greet = *std::find_if(lines.begin(), lines.end(), [](const auto& l) {
    return l.find("  greet ") != std::string::npos;
  });
  EXPECT_NE(greet.find("Succeeded"), std::string::npos) << greet;
  EXPECT_NE(greet.find("native"), std::string::npos) << greet;
  EXPECT_NE(greet.find("greeting=Hello, Ada!"), std::string::npos) << greet;
  EXPECT_EQ(rowsHolding(lines, "words=2"), 1u) << Screen(r.output, 80).text();
}

TEST_F(RunOutputTest, JsonKeepsStandardOutputWhileTheLiveTableGoesToTheTerminal) {
  const std::string json = dir_.write("out.json", "");
  const std::string cmd = binary().string() + " run " + example("hello.toml") + " --plugins " +
                          pluginDir().string() + " --param who=Ada --output json > " + json;
  auto r = runInPty({"/bin/sh", "-c", cmd}, {});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json report = Json::parse(readFile(json));  // nothing else on standard output
  EXPECT_EQ(reportStep(report, "greet")["outputs"]["parameters"]["greeting"], "Hello, Ada!");
  const auto lines = Screen(r.output, 80).lines();
  EXPECT_EQ(rowsHolding(lines, "  report "), 1u) << Screen(r.output, 80).text();
  EXPECT_EQ(rowsHolding(lines, "Succeeded"), 4u) << Screen(r.output, 80).text();
  EXPECT_EQ(r.output.find("\"steps\""), std::string::npos) << r.output;  // not on the terminal
}

TEST_F(RunOutputTest, CtrlCLeavesTheTableOnceWithTheMessageAboveIt) {
  // A message wider than the terminal: its line must not wrap, or moving up over the lines
  // drawn would miss a row. An id wider than the id column is cut.
  const std::string wide = "after-the-nap-" + std::string(50, 'z');
  const std::string wf = dir_.write("wf.toml", R"(name = "wf"
[[steps]]
id = "long"
plugin = "scripted"
args = { message = ")" + std::string(150, 'm') + R"(" }
[[steps]]
id = "nap"
plugin = "sleep"
args = { seconds = 60 }
[[steps]]
id = ")" + wide + R"("
plugin = "echo"
depends = ["nap"]
)");
  auto r = runInPty({binary().string(), "run", wf, "--plugins", dir_.plugins()},
                    {{"Succeeded", "\x03"}});  // Ctrl-C, once long is done (nap naps)
  EXPECT_EQ(r.exit_code, 130) << r.output;
  const Screen screen(r.output, 80);
  const auto lines = screen.lines();
  // The table once: no stale copy of a line above the final table.
  EXPECT_EQ(rowsHolding(lines, "  long "), 1u) << screen.text();
  EXPECT_EQ(rowsHolding(lines, "  nap "), 1u) << screen.text();
  EXPECT_EQ(rowsHolding(lines, "  after-the-nap-zzzzzzzzz…  Skipped"), 1u) << screen.text();
  EXPECT_EQ(rowsHolding(lines, "Pending"), 0u) << screen.text();
  EXPECT_EQ(rowsHolding(lines, "mmmmmmmmmm"), 1u) << screen.text();  // cut, not wrapped
  // The message once, above the table; the terminal's ^C echo erased.
  ASSERT_EQ(rowsHolding(lines, "plugboard: interrupted: cancelling the run"), 1u) << screen.text();
  EXPECT_EQ(rowsHolding(lines, "^C"), 0u) << screen.text();
  const auto row = [&](const std::string& text) {
    return std::find_if(lines.begin(), lines.end(),
                        [&](const auto& l) { return l.find(text) != std::string::npos; }) -
           lines.begin();
  };
  EXPECT_LT(row("interrupted: cancelling"), row("  long "));
  EXPECT_LT(row("  long "), row("  nap "));
  EXPECT_LT(row("  nap "), row("cancelled: step 'nap'"));
  EXPECT_NE(lines[row("  nap ")].find("Cancelled"), std::string::npos) << screen.text();
  EXPECT_NE(lines[row("  after-the-nap-")].find("Skipped"), std::string::npos) << screen.text();
  EXPECT_NE(lines.back().find("workflow 'wf' Cancelled after"), std::string::npos) << screen.text();
}

TEST_F(RunOutputTest, SkippedStepsSayWhyWithoutRepeatingTheirPhase) {
  auto r = plugboard({"run", dir_.write("wf.toml", R"(name = "wf"
[[steps]]
id = "broken"
plugin = "fail"
[[steps]]
id = "after"
plugin = "echo"
depends = ["broken"]
)"),
                      "--plugins", dir_.plugins()});
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_NE(r.out.find("step after: Skipped: dependency 'broken' Failed\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("workflow 'wf' Failed after "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": 0 of 2 steps succeeded\n"), std::string::npos) << r.out;
}

TEST_F(RunOutputTest, TheJsonReportTellsRetriesItemsAndSkippedChainsAsTheTextDoes) {
  // With --output json and no terminal nothing watches the steps as they go: the report is
  // told from the run's nodes at the end. Both ways must say the same of every step.
  const std::string wf = dir_.write("wf.toml", R"(name = "wf"
[[steps]]
id = "bad"
plugin = "fail"
retry = { limit = 2, backoff = "1ms" }
[[steps]]
id = "after-bad"
plugin = "echo"
args = { text = "${steps.bad.outputs.parameters.text}" }
depends = ["bad"]
[[steps]]
id = "after-after"
plugin = "echo"
args = { text = "${steps.after-bad.outputs.parameters.text}" }
depends = ["after-bad"]
[[steps]]
id = "loop"
plugin = "echo"
items = ["x", "y"]
args = { text = "${item}" }
[[steps]]
id = "one"
plugin = "echo"
args = { text = "h\u00e9" }
)");
  auto r = plugboard({"run", wf, "--plugins", dir_.plugins(), "--output", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  const Json report = Json::parse(r.out);
  const Json bad = reportStep(report, "bad");
  EXPECT_EQ(bad["phase"], "Failed");
  EXPECT_EQ(bad["attempts"], 3);
  EXPECT_EQ(bad["calls"], 3);
  EXPECT_EQ(bad["plugin"], "fail@1.0.0");
  EXPECT_EQ(bad["deployer"], "native");
  // Its last attempt's reason, not that of the task that depends on it.
  EXPECT_EQ(bad["message"].get<std::string>().find("omitted"), std::string::npos) << bad;
  EXPECT_NE(bad["message"].get<std::string>().find("fail"), std::string::npos) << bad;
  EXPECT_EQ(reportStep(report, "after-bad")["phase"], "Skipped");
  EXPECT_EQ(reportStep(report, "after-bad")["message"], "dependency 'bad' Failed");
  EXPECT_EQ(reportStep(report, "after-after")["message"], "dependency 'after-bad' Skipped");
  EXPECT_EQ(reportStep(report, "after-after")["attempts"], 0);
  EXPECT_EQ(reportStep(report, "after-after")["plugin"], "");
  const Json loop = reportStep(report, "loop");
  EXPECT_EQ(loop["phase"], "Succeeded");
  EXPECT_EQ(loop["attempts"], 2);
  EXPECT_EQ(loop["outputs"]["parameters"]["text"], (Json{"x", "y"}));
  const Json one = reportStep(report, "one");
  EXPECT_EQ(one["outputs"]["parameters"]["text"], "h\u00e9");
  EXPECT_EQ(one["plugin"], "echo@1.0.0");

  auto text = plugboard({"run", wf, "--plugins", dir_.plugins()});
  EXPECT_EQ(text.exit_code, 1) << text.err << text.out;
  EXPECT_NE(text.out.find("step after-bad: Skipped: dependency 'bad' Failed\n"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("step after-after: Skipped: dependency 'after-bad' Skipped\n"),
            std::string::npos)
      << text.out;
  // The retried step that gave up is told once as it ends, with its last attempt's
  // reason (not first with the retry's "No more retries left", then again).
  const auto failed = text.out.find("step bad: Failed");
  ASSERT_NE(failed, std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("step bad: Failed", failed + 1), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("No more retries left"), std::string::npos) << text.out;
}

TEST_F(RunOutputTest, AnArgoWorkflowsTreeNamesTheDeployerOfEachPluginNode) {
  auto r = plugboard({"run", example("argo/hello-dag.yaml"), "--plugins", pluginDir().string(),
                      "--param", "who=Ada"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::istringstream text(r.out);
  bool header = false, greet = false;
  for (std::string line; std::getline(text, line);) {
    header = header || (line.starts_with("STEP") && line.find("  DEPLOYER  DURATION") != std::string::npos);
    greet = greet || (line.find("✔ greet ") != std::string::npos &&
                      line.find(" native ") != std::string::npos);
  }
  EXPECT_TRUE(header) << r.out;
  EXPECT_TRUE(greet) << r.out;
}

TEST_F(RunOutputTest, AStepIdTooLongSaysSo) {
  const std::string id = std::string(65, 'a');
  auto r = plugboard({"run", dir_.write("wf.toml", "name = \"wf\"\n[[steps]]\nid = \"" + id +
                                                      "\"\nplugin = \"echo\"\n"),
                      "--plugins", dir_.plugins()});
  EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
  EXPECT_NE(r.err.find("step id must be at most 64 characters long"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace plugboard::testing

// plugboard run and validate, driven as a user drives them, on real plugin files.
#include <csignal>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/plugin_dir.h"
#include "tests/support/run_report.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

class RunTest : public TomlRunFixture {};

TEST_F(RunTest, TheBundledExampleRunsAndPassesOutputsAlong) {
  auto r = plugboard({"run", (sourceDir() / "examples/hello.toml").string(), "--plugins",
                      pluginDir().string(), "--param", "who=Ada", "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto report = Json::parse(r.out);
  EXPECT_EQ(report["succeeded"], true);
  EXPECT_EQ(reportStep(report, "greet")["outputs"]["parameters"]["greeting"], "Hello, Ada!");
  EXPECT_EQ(reportStep(report, "shout")["outputs"]["parameters"]["text"], "HELLO, ADA!");
  EXPECT_EQ(reportStep(report, "count")["outputs"]["parameters"]["words"], "2");
  EXPECT_EQ(reportStep(report, "report")["plugin"], "legacy-executor-plugin@0.9.0");
  for (const auto& s : report["steps"]) {
    for (const char* key : {"phase", "message", "outputs", "attempts", "duration_ms"}) {
      EXPECT_TRUE(s.contains(key)) << key;
    }
  }
}

TEST_F(RunTest, TheSecondExampleRunsWithItsPolledStep) {
  auto r = plugboard({"run", (sourceDir() / "examples/pipeline.toml").string(), "--plugins",
                      pluginDir().string(), "--param", "nap=0.05", "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "recount")["plugin"], "multi@1.0.0");
  EXPECT_EQ(reportStep(report, "recount")["outputs"]["parameters"]["words"], "5");
  EXPECT_EQ(reportStep(report, "summary")["outputs"]["parameters"]["workflow"], "pipeline");
}

TEST_F(RunTest, PlainOutputLogsEachChangeAndASummary) {
  auto r = plugboard({"run", (sourceDir() / "examples/hello.toml").string(), "--plugins",
                      pluginDir().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("step greet: Running"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step greet: Succeeded in "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("workflow 'hello-pipeline' Succeeded in "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos);  // no terminal codes when not a terminal
}

TEST_F(RunTest, OnATerminalStepLinesUpdateInPlace) {
  const std::string cmd = binary().string() + " run " + (sourceDir() / "examples/hello.toml").string() +
                          " --plugins " + pluginDir().string();
  auto r = run({"script", "-qec", cmd, "/dev/null"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\x1b[4A"), std::string::npos) << r.out;  // cursor up over 4 step lines
  EXPECT_NE(r.out.find("\x1b[2K  greet"), std::string::npos) << r.out;
}

TEST_F(RunTest, OnATerminalALargeWorkflowShowsCountsInsteadOfALinePerStep) {
  std::string wf = "name = \"wf\"\n";
  for (int i = 0; i < 40; ++i)
    wf += "[[steps]]\nid = \"s" + std::to_string(i) + "\"\nplugin = \"echo\"\n";
  const std::string cmd =
      binary().string() + " run " + dir_.write("wf.toml", wf) + " --plugins " + dir_.plugins();
  auto r = run({"script", "-qec", cmd, "/dev/null"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("40 steps: \x1b[32m40 Succeeded"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\x1b[40A"), std::string::npos) << r.out;  // never a line per step
}

TEST_F(RunTest, AFailureSkipsDependentsWithTheReasonAndOthersGoOn) {
  auto report = runJson(R"(name = "wf"
[[steps]]
id = "broken"
plugin = "fail"
args = { message = "no luck" }
[[steps]]
id = "after"
plugin = "echo"
depends = ["broken"]
[[steps]]
id = "later"
plugin = "echo"
depends = ["after"]
[[steps]]
id = "independent"
plugin = "echo"
)");
  EXPECT_EQ(last_.exit_code, 1);
  EXPECT_EQ(reportStep(report, "broken")["phase"], "Failed");
  EXPECT_EQ(reportStep(report, "broken")["message"], "no luck");
  EXPECT_EQ(reportStep(report, "after")["phase"], "Skipped");
  EXPECT_EQ(reportStep(report, "after")["message"], "dependency 'broken' Failed");
  EXPECT_EQ(reportStep(report, "later")["message"], "dependency 'after' Skipped");
  EXPECT_EQ(reportStep(report, "independent")["phase"], "Succeeded");
}

TEST_F(RunTest, ADeadlineCancelsTheCallAndFailsOnlyThatStep) {
  auto report = runJson(R"(name = "wf"
[[steps]]
id = "slow"
plugin = "sleep"
args = { seconds = 30 }
timeout = "200ms"
[[steps]]
id = "quick"
plugin = "echo"
)");
  EXPECT_EQ(reportStep(report, "slow")["phase"], "Failed");
  EXPECT_EQ(reportStep(report, "slow")["message"],
            // The engine's message for a template's per-attempt timeout, as Argo's.
            "Pod was active on the node longer than the specified deadline");
  EXPECT_LT(reportStep(report, "slow")["duration_ms"].get<int>(), 5000);
  EXPECT_EQ(reportStep(report, "quick")["phase"], "Succeeded");
  EXPECT_EQ(report["abandoned_calls"], 0);
}

// A TOML step without a timeout of its own has the default one (--default-timeout), which
// Argo steps do not get (tests/tools/argo_run_test.cc).
TEST_F(RunTest, AStepWithoutATimeoutHasTheDefaultOne) {
  auto report = runJson(R"(name = "wf"
[[steps]]
id = "slow"
plugin = "sleep"
args = { seconds = 30 }
)",
                        {"--default-timeout", "200ms"});
  EXPECT_EQ(reportStep(report, "slow")["phase"], "Failed");
  EXPECT_EQ(reportStep(report, "slow")["message"],
            "Pod was active on the node longer than the specified deadline");
}

TEST_F(RunTest, ACallThatIgnoresCancellationIsAbandonedAndTheRunStillEnds) {
  auto report = runJson(R"(name = "wf"
[[steps]]
id = "stubborn"
plugin = "scripted"
args = { sleep_ms = 4000, ignore_cancel = true }
timeout = "100ms"
)");
  EXPECT_EQ(reportStep(report, "stubborn")["phase"], "Failed");
  EXPECT_EQ(reportStep(report, "stubborn")["message"],
            // The engine's message for a template's per-attempt timeout, as Argo's.
            "Pod was active on the node longer than the specified deadline");
  EXPECT_EQ(report["abandoned_calls"], 1);
}

TEST_F(RunTest, RunningIsCalledAgainWithOrWithoutARequeueDelay) {
  auto report = runJson(R"(name = "wf"
[[steps]]
id = "poll-interval"
plugin = "scripted"
args = { id = "a", running_times = 2 }
[[steps]]
id = "own-delay"
plugin = "scripted"
args = { id = "b", running_times = 3, requeue_ms = 20 }
[[steps]]
id = "succeeded-with-requeue"
plugin = "scripted"
args = { id = "c", requeue_ms = 3600000 }
timeout = "2s"
)");
  EXPECT_EQ(last_.exit_code, 0) << last_.out;
  EXPECT_EQ(reportStep(report, "poll-interval")["outputs"]["parameters"]["calls"], "3");
  EXPECT_EQ(reportStep(report, "poll-interval")["calls"], 3);
  EXPECT_EQ(reportStep(report, "own-delay")["calls"], 4);
  // Succeeded with an hour's requeue asked: done after one call, never requeued.
  EXPECT_EQ(reportStep(report, "succeeded-with-requeue")["calls"], 1);
  EXPECT_EQ(reportStep(report, "succeeded-with-requeue")["phase"], "Succeeded");
}

TEST_F(RunTest, RetriesFollowThePolicy) {
  auto report = runJson(R"(name = "wf"
[[steps]]
id = "recovers"
plugin = "scripted"
args = { id = "r", fail_times = 2 }
retry = { limit = 2, backoff = "10ms" }
[[steps]]
id = "gives-up"
plugin = "scripted"
args = { id = "g", fail_times = 5 }
retry = { limit = 1, backoff = "10ms" }
)");
  EXPECT_EQ(reportStep(report, "recovers")["phase"], "Succeeded");
  EXPECT_EQ(reportStep(report, "recovers")["attempts"], 3);
  EXPECT_EQ(reportStep(report, "gives-up")["phase"], "Failed");
  EXPECT_EQ(reportStep(report, "gives-up")["attempts"], 2);
  EXPECT_EQ(reportStep(report, "gives-up")["message"], "planned failure on call 2");
}

// Past the 100 attempts a retried step keeps, its report still counts every attempt and
// gives the last one's reason.
TEST_F(RunTest, AStepRetriedPastTheAttemptsKeptCountsThemAll) {
  auto report = runJson(R"(name = "wf"
[[steps]]
id = "gives-up"
plugin = "scripted"
args = { id = "g", fail_times = 1000 }
retry = { limit = 149, backoff = "1ms", factor = 1 }
)");
  EXPECT_EQ(reportStep(report, "gives-up")["phase"], "Failed");
  EXPECT_EQ(reportStep(report, "gives-up")["attempts"], 150);
  EXPECT_EQ(reportStep(report, "gives-up")["calls"], 150);
  EXPECT_EQ(reportStep(report, "gives-up")["message"], "planned failure on call 150");
}

TEST_F(RunTest, ParallelOneNeverRunsTwoCallsAtOnce) {
  // The same steps that overlap in the parallel-probe with --parallel 8 (below) never do
  // with --parallel 1.
  std::string wf = "name = \"wf\"\n";
  for (int i = 0; i < 4; ++i) {
    wf += "[[steps]]\nid = \"p" + std::to_string(i) + "\"\nplugin = \"parallel-probe\"\n";
    wf += "args = { ms = 50 }\n";
  }
  auto report = runJson(wf, {"--parallel", "1"});
  for (const auto& s : report["steps"]) EXPECT_EQ(s["phase"], "Succeeded") << s.dump();
}

TEST_F(RunTest, AThrowingPluginGivesAnErrorNamingIt) {
  auto report = runJson(R"(name = "wf"
[[steps]]
id = "boom"
plugin = "scripted"
args = { throw = "kaboom" }
)");
  EXPECT_EQ(reportStep(report, "boom")["phase"], "Error");
  EXPECT_EQ(reportStep(report, "boom")["message"], "plugin 'scripted' threw: kaboom");
}

TEST_F(RunTest, ASerialPluginIsNeverEnteredTwiceWhileParallelStepsRun) {
  std::string wf = "name = \"wf\"\n";
  for (int i = 0; i < 4; ++i) {
    wf += "[[steps]]\nid = \"s" + std::to_string(i) + "\"\nplugin = \"serial-probe\"\n";
    wf += "[[steps]]\nid = \"p" + std::to_string(i) + "\"\nplugin = \"parallel-probe\"\n";
  }
  auto report = runJson(wf, {"--parallel", "8"});
  int parallel_overlaps = 0;
  for (const auto& s : report["steps"]) {
    const char kind = s["id"].get<std::string>()[0];
    if (kind == 's') {
      EXPECT_EQ(s["phase"], "Succeeded") << s.dump();
    } else {
      parallel_overlaps += s["message"] == "entered twice";
    }
  }
  EXPECT_GT(parallel_overlaps, 0);  // steps did run concurrently, and the probe sees it
}

TEST_F(RunTest, CtrlCOrSigtermCancelsInFlightCallsAndSaysWhat) {
  const std::string workflow = dir_.write("wf.toml", R"(name = "wf"
[[steps]]
id = "nap"
plugin = "sleep"
args = { seconds = 60 }
[[steps]]
id = "after-nap"
plugin = "echo"
depends = ["nap"]
)");
  for (const auto& [signal, said] : {std::pair{SIGINT, "interrupted"}, {SIGTERM, "terminated"}}) {
    RunOptions stop;
    stop.signals = {{signal, "step nap: Running"}};
    auto r = plugboard({"run", workflow, "--plugins", dir_.plugins()}, stop);
    EXPECT_EQ(r.exit_code, 130) << r.out << r.err;
    EXPECT_NE(r.err.find(std::string(said) + ": cancelling the run"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("cancelled: step 'nap' (cancelled while running"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("step after-nap: Skipped: the run was cancelled"),
              std::string::npos)
        << r.out;
  }
}

TEST_F(RunTest, ValidateDoesNotLoadAPluginThatCrashesWhenLoaded) {
  PluginDir dir({"echo"}, {"crash_on_load"});
  const std::string workflow = dir.write("wf.toml", R"(name = "wf"
[[steps]]
id = "doomed"
plugin = "crash-on-load"
)");
  auto r = plugboard({"validate", workflow, "--plugins", dir.plugins()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(workflow + ": ok: workflow 'wf'"), std::string::npos) << r.out;
}

TEST_F(RunTest, SigtermCancelsLikeCtrlCAndASecondSignalStopsAtOnce) {
  // scripted ignores the cancel and would sleep for a minute: the first signal cannot
  // end the run, the second ends the process.
  const std::string workflow = dir_.write("wf.toml", R"(name = "wf"
[[steps]]
id = "stubborn"
plugin = "scripted"
args = { log = "stubborn is inside", sleep_ms = 60000, ignore_cancel = true }
)");
  // The first signal once the plugin is inside the call (its log line): a cancel that comes
  // before the plugin is entered stops the call cleanly, and the run ends on its own.
  RunOptions term;
  term.signals = {{SIGTERM, "stubborn is inside"}, {SIGTERM, "terminated: cancelling the run"}};
  auto r = plugboard({"run", workflow, "--plugins", dir_.plugins(), "--log-level", "info"}, term);
  EXPECT_EQ(r.exit_code, 130) << r.out << r.err;
  EXPECT_NE(r.err.find("terminated: cancelling the run (again to stop at once)"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("workflow 'wf'"), std::string::npos) << r.out;  // it did not wait for the end
}

TEST_F(RunTest, EveryWorkflowErrorIsReportedBeforeAnyStepRuns) {
  const std::string file = dir_.write("bad.toml", R"(name = "wf"
[[steps]]
id = "ok"
plugin = "echo"
[[steps]]
id = "ghost"
plugin = "nosuch"
[[steps]]
id = "typo"
plugin = "echo"
argz = {}
[[steps]]
id = "schema"
plugin = "hello"
args = { name = 5 }
[[steps]]
id = "ref"
plugin = "echo"
args = { x = "${inputs.nothing}" }
)");
  for (const char* command : {"run", "validate"}) {
    auto r = plugboard({command, file, "--plugins", dir_.plugins()});
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_EQ(r.out.find("Running"), std::string::npos) << command;  // nothing ran
    EXPECT_NE(r.err.find(file + ":11:1: step 'typo': unknown key 'argz'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(file + ":16:1: step 'ref': ${inputs.nothing}: the workflow has no input"),
              std::string::npos)
        << r.err;
  }
  // With the structural errors fixed, the catalog checks report the rest.
  const std::string file2 = dir_.write("bad2.toml", R"(name = "wf"
[[steps]]
id = "ghost"
plugin = "nosuch"
[[steps]]
id = "schema"
plugin = "hello"
args = { name = 5 }
)");
  auto r = plugboard({"validate", file2, "--plugins", dir_.plugins()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(file2 + ":2:1: step 'ghost': no plugin 'nosuch' is installed"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(file2 + ":5:1: step 'schema': args.name: expected string, got integer"),
            std::string::npos)
      << r.err;
}

TEST_F(RunTest, SyntaxErrorsAndBadParamsAreReported) {
  const std::string broken = dir_.write("syntax.toml", "name = \"wf\"\n[[steps]\nid = 1\n");
  auto r = plugboard({"run", broken, "--plugins", dir_.plugins()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(broken + ":2:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("TOML syntax error"), std::string::npos) << r.err;

  auto param = plugboard({"run", (sourceDir() / "examples/hello.toml").string(), "--plugins",
                          dir_.plugins(), "--param", "whom=x"});
  EXPECT_EQ(param.exit_code, 2);
  EXPECT_NE(param.err.find("--param whom: the workflow has no input 'whom' (inputs: who)"),
            std::string::npos)
      << param.err;
  auto malformed = plugboard({"run", (sourceDir() / "examples/hello.toml").string(), "--plugins",
                              dir_.plugins(), "--param", "who"});
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_NE(malformed.err.find("expected NAME=VALUE"), std::string::npos);
  auto missing = plugboard({"run", dir_.write("none.toml", ""), "--plugins", dir_.plugins()});
  EXPECT_EQ(missing.exit_code, 2);
}

TEST_F(RunTest, ValidateAcceptsTheExamplesWithoutLoadingAnything) {
  // The dynamic loader lists every file it loads: no plugin may be among them (a plugin is
  // loaded from its checked descriptor, /proc/self/fd/N).
  RunOptions traced;
  traced.env = {"LD_DEBUG=files"};
  const auto loadedPlugins = [](const std::string& trace) {
    std::string loaded;
    for (std::size_t pos = 0; (pos = trace.find("file=", pos)) != std::string::npos; ++pos) {
      const std::string line = trace.substr(pos, trace.find('\n', pos) - pos);
      if (line.find(pluginDir().string()) != std::string::npos ||
          line.find("file=/proc/self/fd/") != std::string::npos) {
        loaded += line + "\n";
      }
    }
    return loaded;
  };
  for (const char* example : {"hello.toml", "pipeline.toml"}) {
    const auto file = (sourceDir() / "examples" / example).string();
    auto r = plugboard({"validate", file, "--plugins", pluginDir().string()}, traced);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(file + ": ok: workflow '"), std::string::npos) << r.out;
    EXPECT_EQ(loadedPlugins(r.err), "");
  }
  // The same trace does show a plugin that is called.
  auto called = plugboard({"call", "hello", "--plugins", pluginDir().string()}, traced);
  EXPECT_EQ(called.exit_code, 0) << called.err;
  EXPECT_NE(loadedPlugins(called.err), "");
}

}  // namespace
}  // namespace plugboard::testing

// Ctrl-C and a step's 1 s deadline while the process and python deployers start a child
// that never answers its hello (start_timeout 60 s), through the real binary: the start
// stops within the cancel grace (no call abandoned) and the child is gone when `run` exits.
// (The container-running deployers: start_cancel_test.cc.)
#include <signal.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/run_report.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

class ChildStartCancelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A plugboard-host that reads the hello and never answers; a Python plugin whose import
    // never ends. Their paths are this test's own: pgrep finds them by it.
    host_ = dir_.write("mute_host.sh", "#!/bin/sh\nread -r line\nsleep 600\n");
    fs::permissions(host_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
    module_ = dir_.write("hang.py", "import time\ntime.sleep(600)\n");
    dir_.write("registry.toml",
               "[plugins.hang.\"1.0.0\"]\npython = { path = \"" + module_ + "\" }\n");
  }

  // Runs `step` (its plugin and deploy lines); Ctrl-C once the child starts, or a 1 s
  // deadline. Checks the outcome and that no process names `marker` after the run.
  void expectStopped(const std::string& step, const std::string& marker, bool deadline) {
    std::string workflow = "name = \"hang\"\n[[steps]]\nid = \"start\"\n" + step;
    RunOptions options;
    if (deadline) {
      workflow += "timeout = \"1s\"\n";
    } else {
      options.signals.push_back({SIGINT, " is starting: waiting for its hello"});
    }
    const RunResult r = plugboard(
        {"run", dir_.write("wf.toml", workflow), "--plugins", pluginDir().string(), "--registry",
         (dir_ / "registry.toml").string(), "--output", "json", "--log-level", "debug",
         // The host program is the configuration's to name, never a step's.
         "--config",
         dir_.write("plugboard.toml", "[deployers.process]\nhost = \"" + host_ + "\"\n")},
        options);
    ASSERT_EQ(r.exit_code, deadline ? 1 : 130) << r.err << r.out;
    const Json report = Json::parse(r.out);
    EXPECT_EQ(report["abandoned_calls"], 0) << r.err;
    const Json s = reportStep(report, "start");
    if (deadline) {
      EXPECT_EQ(s["phase"], "Failed") << s;
      EXPECT_NE(s["message"].get<std::string>().find("longer than the specified deadline"), std::string::npos)
          << s;
    } else {
      EXPECT_EQ(s["phase"], "Cancelled") << s;
    }
    EXPECT_EQ(run({"pgrep", "-a", "-f", marker}).out, "") << r.err;
  }

  std::string processStep() const {
    return "plugin = \"hello\"\nargs = { name = \"Ada\" }\n"
           "deploy = { deployer = \"process\", start_timeout = \"60s\" }\n";
  }
  static std::string pythonStep() {
    return "plugin = \"hang\"\ndeploy = { deployer = \"python\", start_timeout = \"60s\" }\n";
  }

  TempDir dir_;
  std::string host_;
  std::string module_;
};

TEST_F(ChildStartCancelTest, CtrlCStopsAProcessChildBeforeItsHello) {
  expectStopped(processStep(), host_, false);
}

TEST_F(ChildStartCancelTest, TheStepDeadlineStopsAProcessChildBeforeItsHello) {
  expectStopped(processStep(), host_, true);
}

TEST_F(ChildStartCancelTest, CtrlCStopsAPythonChildBeforeItsHello) {
  expectStopped(pythonStep(), module_, false);
}

TEST_F(ChildStartCancelTest, TheStepDeadlineStopsAPythonChildBeforeItsHello) {
  expectStopped(pythonStep(), module_, true);
}

}  // namespace
}  // namespace plugboard::testing

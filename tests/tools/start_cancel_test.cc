// Cancelling a plugin while its deployer starts it, through the real binary and podman:
// Ctrl-C, SIGTERM or the step's deadline during the start of an Argo sidecar whose port
// opens only after 4 s, of one whose port never opens, and of a container image plugin
// and an atp image plugin that never answer their hello (the atp one, with no schema
// cached, is started while `run` checks the workflow, before the step). Each time the
// start stops within the cancel grace (no call abandoned) and nothing outlives the run: no
// container (podman ps -a), no `podman run` process, nothing in the run's $TMPDIR (where
// the sidecar's token goes).
//
// Every container these tests start carries a label of the test's own (option 'args'), so
// that other containers on the machine do not count. The images come from
// tests/support/make_start_cancel_images.sh (a CTest fixture).
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/podman.h"
#include "tests/support/run_report.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

// What the deployers log once the start is under way (podman runs).
constexpr const char* kStarting = " is starting: waiting for ";
// What the plugins' containers write, or the argo deployer logs, once they run.
constexpr const char* kRunning = "mute plugin runs";
constexpr const char* kSidecarRunning = " runs (pid ";

// The test sidecar's manifest, with `from` replaced by `to`.
std::string sidecarManifest(const std::string& from, const std::string& to) {
  std::string m = readFile(sourceDir() / "tests/support/argo_sidecar/plugin.yaml");
  const auto at = m.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) m.replace(at, from.size(), to);
  return m;
}

// The plugins whose start the tests cancel, and their deploy options (TOML).
struct Plugin {
  const char* name;
  const char* deployer;
  const char* args;     // more podman run arguments, after the test's label
  const char* options;  // more options
  const char* running;  // in the run's output once its container runs
  bool checked = false;  // started while `run` checks the workflow, before its steps
};

const Plugin kSlowSidecar{"slow-sidecar", "argo", "", "", kSidecarRunning};
const Plugin kSilentSidecar{"silent-sidecar", "argo", "", "", kSidecarRunning};
const Plugin kMuteContainer{"mute-container", "container", "", "", kRunning};
// The ATP test plugin's image with a program that never answers; no schema cache, so that
// `run` starts it to read its schema while it checks the workflow.
const Plugin kMuteAtp{"mute-atp", "atp",
                      R"(, "--entrypoint", "[\"python3\", \"-c\", \"import sys, time; )"
                      R"(print('mute plugin runs', file=sys.stderr, flush=True); time.sleep(600)\"]")",
                      R"(, cache_dir = "")", kRunning, true};

// A mute plugin's program: says that it runs, then never answers.
constexpr const char* kMuteCommand =
    R"x(command = ["python3", "-c", "import sys, time; )x"
    R"x(print('mute plugin runs', file=sys.stderr, flush=True); time.sleep(600)"])x";

// Signals once the plugin's container runs, but for kCtrlCAtStart: as soon as its start
// is under way (`podman run` may not have made the container yet).
enum class Stop { kCtrlC, kSigterm, kDeadline, kCtrlCTwice, kCtrlCAtStart };

void PrintTo(const Plugin& plugin, std::ostream* os) { *os << plugin.name; }
void PrintTo(Stop stop, std::ostream* os) { *os << static_cast<int>(stop); }

class StartCancelTest : public ::testing::TestWithParam<std::tuple<Plugin, Stop>> {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "sockets in a container's network namespace need root";
    std::filesystem::create_directories(tmp_);
    // Its port opens 4 s after it starts; it never opens with NO_LISTEN=1.
    const std::string slow = sidecarManifest(
        "      args:\n        - /plugin/server.py\n",
        "      args:\n        - -c\n        - \"import runpy, time; time.sleep(4); "
        "runpy.run_path('/plugin/server.py', run_name='__main__')\"\n");
    const std::string silent = sidecarManifest(
        "        - name: PLUGIN_NAME\n",
        "        - name: NO_LISTEN\n          value: \"1\"\n        - name: PLUGIN_NAME\n");
    writeFile(dir_.path() / "registry.toml",
              "[plugins.slow-sidecar.\"1.0.0\"]\nargo = \"" + dir_.write("slow.yaml", slow) +
                  "\"\n[plugins.silent-sidecar.\"1.0.0\"]\nargo = \"" +
                  dir_.write("silent.yaml", silent) +
                  "\"\n[plugins.mute-container.\"1.0.0\"]\n"
                  "container = { image = \"localhost/plugboard-test/argo-sidecar:latest\", " +
                  kMuteCommand + " }\n"
                  "[plugins.mute-atp.\"1.0.0\"]\n"
                  "atp = { image = \"localhost/plugboard-test/atp-fixture:latest\" }\n");
  }
  void TearDown() override {
    // Whatever a failed test left, so that it fails alone.
    run({"podman", "rm", "--force", "--time", "0", "--filter", "label=" + label_});
  }

  // A configuration that deploys `plugin` with the test's label: podman's arguments are the
  // configuration's to give, never a step's.
  std::string labelledConfig(const Plugin& plugin) {
    return dir_.write("plugboard.toml", std::string("[deploy]\n\"") + plugin.name +
                                            "\" = { deployer = \"" + plugin.deployer +
                                            "\", args = [\"--label\", \"" + label_ + "\"" +
                                            plugin.args + "]" + plugin.options + " }\n");
  }

  // The step, deployed with the test's label, and the signals `stop` sends.
  RunResult runStep(const Plugin& plugin, Stop stop) {
    std::string workflow = "name = \"cancelled\"\n[[steps]]\nid = \"start\"\nplugin = \"" +
                           std::string(plugin.name) + "\"\n";
    if (stop == Stop::kDeadline) workflow += "timeout = \"1s\"\n";
    RunOptions run_options;
    run_options.env = {"TMPDIR=" + tmp_.string()};
    if (stop == Stop::kCtrlC || stop == Stop::kCtrlCTwice)
      run_options.signals.push_back({SIGINT, plugin.running});
    if (stop == Stop::kSigterm) run_options.signals.push_back({SIGTERM, plugin.running});
    if (stop == Stop::kCtrlCAtStart) run_options.signals.push_back({SIGINT, kStarting});
    if (stop == Stop::kCtrlCTwice) run_options.signals.push_back({SIGINT, "cancelling the run"});
    return run(runWithRegistry(dir_, workflow,
                               {"--log-level", "debug", "--config", labelledConfig(plugin)}),
               run_options);
  }

  std::string leftContainers() const { return containersLeft("label=" + label_); }
  // The command lines of processes that name the label: `podman run` of these tests.
  std::string leftPodmanRuns() const { return run({"pgrep", "-a", "-f", label_}).out; }
  std::vector<std::string> leftFiles() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(tmp_)) out.push_back(e.path());
    return out;
  }

  TempDir dir_;
  const std::filesystem::path tmp_ = dir_.path() / "tmp";
  const std::string label_ =
      "org.plugboard.test=start-cancel-" + std::to_string(getpid()) + "-" +
      ::testing::UnitTest::GetInstance()->current_test_info()->name();
};

TEST_P(StartCancelTest, StopsTheStartAndLeavesNoContainerProcessOrDirectory) {
  const auto [plugin, stop] = GetParam();
  const RunResult r = runStep(plugin, stop);
  if (stop == Stop::kDeadline) {
    ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
    const Json step = reportStep(Json::parse(r.out), "start");
    EXPECT_EQ(step["phase"], "Failed") << step;
    EXPECT_NE(step["message"].get<std::string>().find("longer than the specified deadline"),
              std::string::npos)
        << step;
  } else {
    ASSERT_EQ(r.exit_code, 130) << r.err << r.out;
  }
  if (stop != Stop::kCtrlCTwice) {
    const Json report = Json::parse(r.out);
    // Stopped within the cancel grace: not given up on.
    EXPECT_EQ(report["abandoned_calls"], 0) << r.err;
    if (stop != Stop::kDeadline) {
      // Cancelled while it started, or, when the run was cancelled before it, not run.
      EXPECT_EQ(reportStep(report, "start")["phase"], plugin.checked ? "Skipped" : "Cancelled")
          << r.out;
    }
  }
  EXPECT_EQ(leftContainers(), "") << r.err;
  EXPECT_EQ(leftPodmanRuns(), "") << r.err;
  EXPECT_EQ(leftFiles(), std::vector<std::string>()) << r.err;
}

// validate starts an ATP plugin with no cached schema to read it; exec starts the plugin
// its request names. Ctrl-C during either start leaves nothing behind either.
class OtherCommandsStartCancelTest : public StartCancelTest {
 protected:
  // `command` (validate or exec) with the plugin deployed with the test's label, through
  // a configuration's [deploy] (exec has no step to carry deploy options).
  RunResult interrupted(const char* command, const Plugin& plugin) {
    const std::string config = labelledConfig(plugin);
    std::vector<std::string> argv = {binary().string(), command, "--plugins", pluginDir().string(),
                                     "--registry", (dir_.path() / "registry.toml").string(),
                                     "--config", config, "--log-level", "debug"};
    RunOptions run_options;
    run_options.env = {"TMPDIR=" + tmp_.string()};
    run_options.signals.push_back({SIGINT, plugin.running});
    if (std::string(command) == "validate") {
      argv.push_back(dir_.write("wf.toml", std::string("name = \"checked\"\n[[steps]]\nid = "
                                                       "\"start\"\nplugin = \"") +
                                               plugin.name + "\"\n"));
    } else {
      run_options.input = std::string(R"({"workflow":{"metadata":{"name":"wf"}},"template":{"name":"t","plugin":{")") +
                          plugin.name + R"(":{}}}})";
    }
    return run(argv, run_options);
  }
};

#ifdef PLUGBOARD_TEST_ATP
TEST_F(OtherCommandsStartCancelTest, ValidateStopsTheStartOfAPluginItDescribes) {
  const RunResult r = interrupted("validate", kMuteAtp);
  EXPECT_EQ(r.exit_code, 130) << r.err << r.out;
  EXPECT_NE(r.err.find("not checked: cancelled"), std::string::npos) << r.err;
  EXPECT_EQ(leftContainers(), "") << r.err;
  EXPECT_EQ(leftPodmanRuns(), "") << r.err;
  EXPECT_EQ(leftFiles(), std::vector<std::string>()) << r.err;
}
#endif

TEST_F(OtherCommandsStartCancelTest, ExecStopsAtOnceAndRemovesTheSidecarItStarted) {
  // exec reaches a plugin only the registry knows by polling it: the sidecar says it may be.
  const std::string yaml = (dir_.path() / "silent.yaml").string();
  writeFile(dir_.path() / "registry.toml",
            "[plugins.silent-sidecar.\"1.0.0\"]\nargo = { path = \"" + yaml + "\", polled = true }\n");
  const RunResult r = interrupted("exec", kSilentSidecar);
  EXPECT_EQ(r.exit_code, 130) << r.err << r.out;
  EXPECT_NE(r.err.find("interrupted: stopping"), std::string::npos) << r.err;
  EXPECT_EQ(leftContainers(), "") << r.err;
  EXPECT_EQ(leftPodmanRuns(), "") << r.err;
  EXPECT_EQ(leftFiles(), std::vector<std::string>()) << r.err;
}

std::string nameOf(const ::testing::TestParamInfo<std::tuple<Plugin, Stop>>& info) {
  const auto [plugin, stop] = info.param;
  std::string name;
  bool upper = true;
  for (const char* c = plugin.name; *c != '\0'; ++c) {
    if (*c == '-') {
      upper = true;
      continue;
    }
    name += upper ? static_cast<char>(std::toupper(*c)) : *c;
    upper = false;
  }
  switch (stop) {
    case Stop::kCtrlC: return name + "CtrlC";
    case Stop::kSigterm: return name + "Sigterm";
    case Stop::kDeadline: return name + "Deadline1s";
    case Stop::kCtrlCTwice: return name + "CtrlCTwice";
    case Stop::kCtrlCAtStart: return name + "CtrlCAtStart";
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(
    Plugins, StartCancelTest,
    ::testing::Combine(::testing::Values(kSlowSidecar, kSilentSidecar, kMuteContainer),
                       ::testing::Values(Stop::kCtrlC, Stop::kSigterm, Stop::kDeadline,
                                         Stop::kCtrlCAtStart)),
    nameOf);
#ifdef PLUGBOARD_TEST_ATP
INSTANTIATE_TEST_SUITE_P(Atp, StartCancelTest,
                         ::testing::Combine(::testing::Values(kMuteAtp),
                                            ::testing::Values(Stop::kCtrlC, Stop::kSigterm,
                                                              Stop::kDeadline, Stop::kCtrlCTwice,
                                                              Stop::kCtrlCAtStart)),
                         nameOf);
#endif
// A second Ctrl-C ends the run at once: the deployers still remove what they started.
INSTANTIATE_TEST_SUITE_P(SecondSignal, StartCancelTest,
                         ::testing::Combine(::testing::Values(kSlowSidecar, kMuteContainer),
                                            ::testing::Values(Stop::kCtrlCTwice)),
                         nameOf);

}  // namespace
}  // namespace plugboard::testing

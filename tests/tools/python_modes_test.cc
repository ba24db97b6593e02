// The python deployer in both of its modes, through the real binary: each case a Python
// plugin can present (hello, outputs to and from native steps, requeue, cancel at a deadline, a
// module that raises, prints, calls sys.exit, does not compile or is not found, a wrong
// interpreter) is one step of one workflow per mode; each gives a step result or a step
// error naming the plugin and the cause while the other steps go on.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/run_report.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

std::string pythonFixtures() { return (sourceDir() / "tests" / "fixtures" / "python").string(); }

class PythonModesTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string examples = (sourceDir() / "plugins" / "python").string();
    const std::string fixtures = pythonFixtures();
    std::string reg = "[plugins.pyhello.\"1.0.0\"]\npython = { module = \"pyhello\", path = \"" +
                      examples + "\" }\n[plugins.pycounter.\"1.0.0\"]\npython = { path = \"" +
                      examples + "/pycounter.py\" }\n[plugins.ghost.\"1.0.0\"]\n" +
                      "python = { module = \"no_such_module\", path = \"" + fixtures + "\" }\n";
    for (const char* name : {"raises", "prints", "exits", "broken_syntax", "slow", "cext"}) {
      reg += std::string("[plugins.") + name + ".\"1.0.0\"]\npython = { path = \"" + fixtures +
             "/" + name + ".py\" }\n";
    }
    writeFile(dir_.path() / "registry.toml", reg);
  }

  // The deploy table of a step in this test's mode, with `more` options.
  std::string deploy(const std::string& more = "") const {
    return "{ deployer = \"python\", mode = \"" + GetParam() + "\"" +
           (more.empty() ? "" : ", " + more) + " }";
  }

  // `config`: the configuration file's text, when the run needs one (an interpreter or a
  // virtual environment is the configuration's to name, never a step's).
  RunResult runWorkflow(const std::string& toml, const std::string& config = "") {
    writeFile(dir_.path() / "wf.toml", toml);
    std::vector<std::string> argv = {binary().string(), "run", (dir_.path() / "wf.toml").string(),
                                     "--plugins", pluginDir().string(), "--registry",
                                     (dir_.path() / "registry.toml").string(), "--output", "json",
                                     "--poll-interval", "10ms", "--log-level", "info"};
    if (!config.empty()) argv.insert(argv.end(), {"--config", dir_.write("plugboard.toml", config)});
    return run(argv, "");
  }

  TempDir dir_;
};

TEST_P(PythonModesTest, EveryCaseIsAResultOrAStepErrorNamingPluginAndCause) {
  const std::string d = deploy();
  auto r = runWorkflow(R"(
name = "modes"
[[steps]]
id = "native"
plugin = "hello"
args = { name = "Ada" }
[[steps]]
id = "hello"
plugin = "pyhello"
deploy = )" + d + R"(
depends = ["native"]
args = { name = "${steps.native.outputs.parameters.greeting}" }
[[steps]]
id = "back"
plugin = "hello"
depends = ["hello"]
args = { name = "${steps.hello.outputs.parameters.greeting}" }
[[steps]]
id = "requeue"
plugin = "pycounter"
deploy = )" + d + R"(
args = { id = "r", times = 3 }
[[steps]]
id = "raises"
plugin = "raises"
deploy = )" + d + R"(
[[steps]]
id = "prints"
plugin = "prints"
deploy = )" + d + R"(
[[steps]]
id = "exits"
plugin = "exits"
deploy = )" + d + R"(
[[steps]]
id = "syntax"
plugin = "broken_syntax"
deploy = )" + d + R"(
[[steps]]
id = "missing"
plugin = "ghost"
deploy = )" + d + R"(
[[steps]]
id = "cext"
plugin = "cext"
deploy = )" + d + R"(
[[steps]]
id = "polite"
plugin = "slow"
deploy = )" + d + R"(
timeout = "300ms"
args = { mode = "polite" }
[[steps]]
id = "stubborn"
plugin = "slow"
deploy = )" + deploy("cancel_grace = \"200ms\"") +
                       R"(
timeout = "300ms"
args = { mode = "stubborn" }
)");
  ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
  const Json report = Json::parse(r.out);
  const auto message = [&](const char* step) {
    return reportStep(report, step)["message"].get<std::string>();
  };
  const auto phase = [&](const char* step) {
    return reportStep(report, step)["phase"].get<std::string>();
  };

  // Outputs pass native -> Python -> native.
  EXPECT_EQ(reportStep(report, "hello")["outputs"]["parameters"]["greeting"],
            "Hello, Hello, Ada!!");
  EXPECT_EQ(reportStep(report, "back")["outputs"]["parameters"]["greeting"],
            "Hello, Hello, Hello, Ada!!!");
  EXPECT_EQ(phase("requeue"), "Succeeded");
  EXPECT_EQ(reportStep(report, "requeue")["calls"], 3);

  // Prints go to the log, not into the runtime's output (the report above parsed).
  EXPECT_EQ(phase("prints"), "Succeeded") << message("prints");
  EXPECT_EQ(reportStep(report, "prints")["outputs"]["parameters"]["said"], "after printing");

  EXPECT_EQ(phase("raises"), "Error");
  EXPECT_NE(message("raises").find("plugin 'raises' raised ValueError: no good input"),
            std::string::npos)
      << message("raises");
  EXPECT_NE(message("raises").find("raises.py:"), std::string::npos) << message("raises");

  EXPECT_EQ(phase("exits"), "Error");
  EXPECT_NE(message("exits").find("plugin 'exits' called sys.exit(3)"), std::string::npos)
      << message("exits");

  EXPECT_EQ(phase("syntax"), "Error");
  EXPECT_NE(message("syntax").find("broken_syntax"), std::string::npos) << message("syntax");
  EXPECT_NE(message("syntax").find("SyntaxError"), std::string::npos) << message("syntax");
  EXPECT_NE(message("syntax").find("line 4"), std::string::npos) << message("syntax");

  EXPECT_EQ(phase("missing"), "Error");
  EXPECT_NE(message("missing").find("ghost"), std::string::npos) << message("missing");
  EXPECT_NE(message("missing").find("No module named"), std::string::npos) << message("missing");
  EXPECT_NE(message("missing").find("no_such_module"), std::string::npos) << message("missing");

  // C extension modules load (in embedded mode: libpython's symbols are global).
  EXPECT_EQ(phase("cext"), "Succeeded") << message("cext");
  const Json cext = reportStep(report, "cext")["outputs"]["parameters"];
  EXPECT_EQ(cext["decimal"], "3.305");
  EXPECT_EQ(cext["json_c"], "True");
  EXPECT_EQ(cext["ctypes"], "True");

  // Deadlines: the polite call stops on cancel; the stubborn one is stopped from outside
  // (its child killed, or CallInterrupted raised in it), so no call is abandoned.
  EXPECT_EQ(phase("polite"), "Failed");
  EXPECT_NE(message("polite").find("longer than the specified deadline"), std::string::npos)
      << message("polite");
  EXPECT_EQ(phase("stubborn"), "Failed");
  EXPECT_NE(message("stubborn").find("longer than the specified deadline"), std::string::npos);
  EXPECT_EQ(report["abandoned_calls"], 0) << r.err;

  // What the plugin printed is in the runtime's log.
  if (GetParam() == "embedded") {
    EXPECT_NE(r.err.find("[prints] stdout: printed in a call"), std::string::npos) << r.err;
  } else {
    EXPECT_NE(r.err.find("printed in a call"), std::string::npos) << r.err;
  }
}

TEST_P(PythonModesTest, AWrongInterpreterIsAStepErrorNamingIt) {
  auto r = runWorkflow(R"(
name = "wrong"
[[steps]]
id = "py"
plugin = "pyhello"
args = { name = "x" }
[[steps]]
id = "fine"
plugin = "pyhello"
deploy = )" + deploy() +
                       R"(
args = { name = "y" }
)",
                       "[deploy]\npyhello = " + deploy("python = \"/nonexistent/python3\"") + "\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const Json report = Json::parse(r.out);
  const std::string message = reportStep(report, "py")["message"];
  EXPECT_NE(message.find("/nonexistent/python3"), std::string::npos) << message;
  EXPECT_NE(message.find("pyhello"), std::string::npos) << message;
  EXPECT_EQ(reportStep(report, "fine")["phase"], "Succeeded");
}

TEST_P(PythonModesTest, AVirtualenvsPackagesAreImportable) {
  const auto venv = dir_.path() / "venv";
  auto made = run({"/usr/bin/python3", "-m", "venv", "--without-pip", venv.string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  writeFile(venv / "lib" / "python3.11" / "site-packages" / "only_in_venv.py", "WHERE = 'the venv'\n");
  writeFile(dir_.path() / "venvuser.py",
            "import only_in_venv\nimport plugboard_sdk as pb\n\n"
            "@pb.plugin(name=\"venvuser\", version=\"1.0.0\", provides=[\"template.execute\"])\n"
            "def execute(request):\n    return pb.succeeded({\"from\": only_in_venv.WHERE})\n");
  writeFile(dir_.path() / "registry.toml",
            "[plugins.venvuser.\"1.0.0\"]\npython = { path = \"" +
                (dir_.path() / "venvuser.py").string() + "\" }\n");
  auto r = runWorkflow("name = \"v\"\n[[steps]]\nid = \"py\"\nplugin = \"venvuser\"\n",
                       "[deploy]\nvenvuser = " + deploy("venv = \"" + venv.string() + "\"") + "\n");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(reportStep(Json::parse(r.out), "py")["outputs"]["parameters"]["from"], "the venv");
}

INSTANTIATE_TEST_SUITE_P(Modes, PythonModesTest, ::testing::Values("process", "embedded"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace plugboard::testing

// The python deployer through the real binary: Python plugins from the registry beside
// native and process steps in one workflow, and the bundled examples/mixed.toml. (Each
// failure case in both modes: python_modes_test.cc.)
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/run_report.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;


class PythonDeployerTest : public ::testing::Test {
 protected:
  std::string registry() {
    const std::string python = (sourceDir() / "plugins" / "python").string();
    return dir_.write("registry.toml", "[plugins.pyhello.\"1.0.0\"]\npython = { module = \"pyhello\", path = \"" + python +
                                      "\" }\n[plugins.pycounter.\"1.0.0\"]\npython = { path = \"" + python +
                                      "/pycounter.py\" }\n");
  }
  TempDir dir_;
};

TEST_F(PythonDeployerTest, PythonStepsPassOutputsWithNativeAndProcessSteps) {
  auto r = plugboard({"run", dir_.write("wf.toml", R"(
name = "mixed"
[[steps]]
id = "native"
plugin = "hello"
args = { name = "Ada" }
[[steps]]
id = "py"
plugin = "pyhello"
depends = ["native"]
args = { name = "${steps.native.outputs.parameters.greeting}" }
[[steps]]
id = "count"
plugin = "pycounter"
args = { id = "x", times = 3 }
[[steps]]
id = "isolated"
plugin = "hello"
deploy = "process"
depends = ["py"]
args = { name = "${steps.py.outputs.parameters.greeting}" }
)"),
                      "--plugins", pluginDir().string(), "--registry", registry(), "--output", "json",
                      "--poll-interval", "10ms"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "py")["outputs"]["parameters"]["greeting"], "Hello, Hello, Ada!!");
  EXPECT_EQ(reportStep(report, "py")["plugin"], "pyhello@1.0.0");
  EXPECT_EQ(reportStep(report, "isolated")["outputs"]["parameters"]["greeting"], "Hello, Hello, Hello, Ada!!!");
  EXPECT_EQ(reportStep(report, "count")["phase"], "Succeeded");
  EXPECT_EQ(reportStep(report, "count")["calls"], 3);  // requeued twice
}

TEST_F(PythonDeployerTest, AWrongInterpreterOrAMissingModuleIsAStepErrorNamingIt) {
  const std::string reg = registry();
  auto wrong = plugboard({"run", dir_.write("a.toml", R"(
name = "a"
[[steps]]
id = "py"
plugin = "pyhello"
args = { name = "x" }
)"),
                          "--plugins", pluginDir().string(), "--registry", reg, "--output", "json",
                          // The interpreter is the configuration's to name, never a step's.
                          "--config", dir_.write("plugboard.toml", R"([deploy]
pyhello = { deployer = "python", python = "/nonexistent/python3" }
)")});
  EXPECT_EQ(wrong.exit_code, 1) << wrong.err;
  const std::string message = reportStep(Json::parse(wrong.out), "py")["message"];
  EXPECT_NE(message.find("cannot run /nonexistent/python3"), std::string::npos) << message;

  dir_.write("missing.toml", "[plugins.ghost.\"1.0.0\"]\npython = { module = \"no_such_module\", path = \"" +
                            dir_.path().string() + "\" }\n");
  auto missing = plugboard({"run", dir_.write("b.toml", "name = \"b\"\n[[steps]]\nid = \"py\"\nplugin = \"ghost\"\n"),
                            "--plugins", pluginDir().string(), "--registry", (dir_.path() / "missing.toml").string(),
                            "--output", "json"});
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  const std::string why = reportStep(Json::parse(missing.out), "py")["message"];
  EXPECT_NE(why.find("No module named no_such_module"), std::string::npos) << why;
}

TEST_F(PythonDeployerTest, TheMixedExampleRunsNativeProcessAndBothPythonModes) {
  auto r = plugboard({"run", (sourceDir() / "examples" / "mixed.toml").string(), "--plugins",
                      pluginDir().string(), "--registry",
                      (sourceDir() / "examples" / "registry.toml").string(), "--param", "who=Ada",
                      "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "isolated")["outputs"]["parameters"]["text"], "HELLO, ADA!");
  EXPECT_EQ(reportStep(report, "python")["outputs"]["parameters"]["greeting"], "Hello, HELLO, ADA!!");
  EXPECT_EQ(reportStep(report, "embedded")["outputs"]["parameters"]["greeting"],
            "Hello, Hello, HELLO, ADA!!!");
  EXPECT_EQ(reportStep(report, "count")["outputs"]["parameters"]["words"], "4");
}

}  // namespace
}  // namespace plugboard::testing

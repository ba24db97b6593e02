// Workflow steps that name their deployer, the registry, and deployer directories, driven
// through the real binary with the real deployer modules.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/examples.h"
#include "tests/support/files.h"
#include "tests/support/plugin_dir.h"
#include "tests/support/run_report.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

class DeployTest : public ::testing::Test {
 protected:
  std::vector<std::string> runArgs(const std::string& workflow) {
    return {"run", dir_.write("wf.toml", workflow), "--plugins", dir_.plugins(), "--output", "json"};
  }

  PluginDir dir_;
};

TEST_F(DeployTest, TheBundledDeployersExampleRuns) {
  // Under ASan or TSan, a copy without its `memory` option (their shadow memory).
  const TempDir scratch;
  const std::string example = runnableDeployersExample(scratch.path());
  auto r = plugboard({"run", example, "--plugins", pluginDir().string(), "--param", "who=Ada",
                      "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "count")["outputs"]["parameters"]["words"], "2");
  EXPECT_EQ(reportStep(report, "shout")["outputs"]["parameters"]["text"], "HELLO, ADA!");
}

// The registry does not hide the plugin directory: hello@1.2.0 is both the .so in the
// plugin directory and the registry's python and container artifacts, one plugin, so the
// step that runs it through `process` finds the .so (issue 29).
TEST_F(DeployTest, TheRegistryDoesNotHideThePluginDirectory) {
  const std::string example = (sourceDir() / "examples/deployers.toml").string();
  const std::string registry = (sourceDir() / "examples/registry.toml").string();
  auto checked = plugboard({"validate", example, "--plugins", pluginDir().string(), "--registry",
                            registry});
  EXPECT_EQ(checked.exit_code, 0) << checked.err << checked.out;
  EXPECT_EQ(checked.err.find("has only"), std::string::npos) << checked.err;

  // And it runs: the step through `process` gets the plugin directory's file.
  auto r = plugboard({"run", dir_.write("wf.toml", R"(
name = "both"
[[steps]]
id = "greet"
plugin = "hello"
deploy = "process"
args = { name = "Ada" }
)"),
                      "--plugins", pluginDir().string(), "--registry", registry, "--output",
                      "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "greet")["outputs"]["parameters"]["greeting"], "Hello, Ada!");
  EXPECT_EQ(reportStep(report, "greet")["plugin"], "hello@1.2.0");
}

TEST_F(DeployTest, AStepRunsThroughTheDeployerItNamesBesideDefaultSteps) {
  auto r = plugboard(runArgs(R"(
name = "mixed"
[[steps]]
id = "greet"
plugin = "hello"
deploy = "native"
args = { name = "Ada" }
[[steps]]
id = "echo"
plugin = "echo"
depends = ["greet"]
deploy = { deployer = "native", config = {} }
args = { said = "${steps.greet.outputs.parameters.greeting}" }
[[steps]]
id = "plain"
plugin = "echo"
depends = ["echo"]
args = { again = "${steps.echo.outputs.parameters.said}" }
)"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "echo")["outputs"]["parameters"]["said"], "Hello, Ada!");
  EXPECT_EQ(reportStep(report, "plain")["outputs"]["parameters"]["again"], "Hello, Ada!");
  EXPECT_EQ(reportStep(report, "greet")["plugin"], "hello@1.2.0");
}

TEST_F(DeployTest, NativeAndProcessStepsOfTheSameAndDifferentPluginsShareOneWorkflow) {
  PluginDir dir({"hello", "echo"}, {"crashy", "scripted"});
  auto r = plugboard({"run", dir.write("wf.toml", R"(
name = "mixed"
[[steps]]
id = "in_process"
plugin = "crashy"
deploy = "native"
[[steps]]
id = "isolated"
plugin = "crashy"
deploy = "process"
[[steps]]
id = "isolated_again"
plugin = "crashy"
deploy = "process"
depends = ["isolated"]
[[steps]]
id = "greet"
plugin = "hello"
deploy = { deployer = "process", memory = "2G" }
args = { name = "Ada" }
[[steps]]
id = "echo"
plugin = "echo"
depends = ["greet", "in_process"]
args = { said = "${steps.greet.outputs.parameters.greeting}", native_pid = "${steps.in_process.outputs.parameters.pid}" }
)"),
                      "--plugins", dir.plugins(), "--output", "json", "--parallel", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto report = Json::parse(r.out);
  const std::string runtime_pid = reportStep(report, "echo")["outputs"]["parameters"]["native_pid"];
  const std::string child_pid = reportStep(report, "isolated")["outputs"]["parameters"]["pid"];
  EXPECT_NE(runtime_pid, child_pid);  // in the runtime, and in a child
  // One child per plugin per run, shared by the steps that use it.
  EXPECT_EQ(reportStep(report, "isolated_again")["outputs"]["parameters"]["pid"], child_pid);
  EXPECT_EQ(reportStep(report, "echo")["outputs"]["parameters"]["said"], "Hello, Ada!");
}

TEST_F(DeployTest, ASegfaultInProcessModeFailsItsStepAndTheRunGoesOn) {
  PluginDir dir({"hello", "echo"}, {"crashy", "scripted"});
  auto r = plugboard({"run", dir.write("wf.toml", R"(
name = "crash"
[[steps]]
id = "crash"
plugin = "crashy"
deploy = "process"
args = { crash = "segv" }
[[steps]]
id = "beside"
plugin = "crashy"
deploy = { deployer = "process", memory = "3G" }
[[steps]]
id = "hang"
plugin = "scripted"
deploy = { deployer = "process", cancel_grace = "100ms" }
timeout = "300ms"
args = { sleep_ms = 60000, ignore_cancel = true }
[[steps]]
id = "other"
plugin = "hello"
args = { name = "still here" }
[[steps]]
id = "runtime"
plugin = "crashy"
deploy = "native"
)"),
                      "--plugins", dir.plugins(), "--output", "json", "--parallel", "4"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto report = Json::parse(r.out);
  const Json crash = reportStep(report, "crash");
  EXPECT_EQ(crash["phase"], "Error");
  EXPECT_NE(crash["message"].get<std::string>().find("plugin 'crashy' (process) crashed: killed by signal 11 (SIGSEGV)"),
            std::string::npos)
      << crash["message"];
  EXPECT_EQ(reportStep(report, "other")["phase"], "Succeeded");
  // Other options, so another child: the crash of the first does not touch it. (Calls in
  // flight in the child that crashed would end with the same Error.)
  const Json beside = reportStep(report, "beside");
  EXPECT_EQ(beside["phase"], "Succeeded");
  const std::string runtime_pid = reportStep(report, "runtime")["outputs"]["parameters"]["pid"];
  EXPECT_NE(beside["outputs"]["parameters"]["pid"], runtime_pid) << beside;  // a child
  EXPECT_EQ(beside["outputs"]["parameters"]["ppid"], runtime_pid) << beside;  // of the runtime
  const Json hang = reportStep(report, "hang");
  EXPECT_NE(hang["phase"], "Succeeded");
  EXPECT_NE(hang["message"].get<std::string>().find("longer than the specified deadline"), std::string::npos) << hang;
}

TEST_F(DeployTest, ValidateResolvesEveryStepToADeployerAndArtifactBeforeRunning) {
  const std::string registry = dir_.write("registry.toml", R"(
[plugins.pyonly."1.0.0"]
wasm = { module = "pyonly.wasm" }
)");
  const std::string wf = dir_.write("wf.toml", R"(
name = "bad"
[[steps]]
id = "unknown"
plugin = "hello"
deploy = "teleport"
[[steps]]
id = "option"
plugin = "hello"
deploy = { deployer = "native", memory = "1G" }
[[steps]]
id = "artifact"
plugin = "pyonly"
deploy = "native"
[[steps]]
id = "nodeployer"
plugin = "pyonly"
[[steps]]
id = "fine"
plugin = "hello"
deploy = "native"
args = { name = "x" }
)");
  auto r = plugboard({"validate", wf, "--plugins", dir_.plugins(), "--registry", registry});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("wf.toml:6:10: step 'unknown': no deployer 'teleport' (installed deployers: argo, atp, container, native"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("step 'option': deployer 'native' has no option 'memory' (it takes: config)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("step 'artifact': deployer 'native' deploys native artifacts, and plugin pyonly@1.0.0 "
                       "has only: wasm"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("step 'nodeployer': no installed deployer deploys any artifact of plugin pyonly@1.0.0 "
                       "(it has: wasm)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("step 'fine'"), std::string::npos) << r.err;
}

TEST_F(DeployTest, APluginKnownOnlyToTheRegistryRunsThroughTheDefaultOrder) {
  const std::string registry = dir_.write("registry.toml", "[plugins.greeter.\"2.0.0\"]\nnative = \"" +
                                                               plugin("hello").string() + "\"\n");
  auto args = runArgs(R"(
name = "registry"
[[steps]]
id = "greet"
plugin = "greeter@2"
args = { name = "Grace" }
)");
  args.insert(args.end(), {"--registry", registry});
  auto r = plugboard(args);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "greet")["outputs"]["parameters"]["greeting"], "Hello, Grace!");
  EXPECT_EQ(reportStep(report, "greet")["plugin"], "greeter@2.0.0");
}

TEST_F(DeployTest, WithoutADeployerOfNativePluginsAStepSaysWhereItLooked) {
  TempDir empty;
  auto args = runArgs("name = \"x\"\n[[steps]]\nid = \"greet\"\nplugin = \"hello\"\nargs = { name = \"x\" }\n");
  args.insert(args.end(), {"--deployers", empty.path().string()});
  auto r = plugboard(args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto report = Json::parse(r.out);
  const std::string message = reportStep(report, "greet")["message"];
  EXPECT_NE(message.find("needs a deployer of native plugins, and none is installed (deployer directories: " +
                         empty.path().string()),
            std::string::npos)
      << message;
}

TEST_F(DeployTest, ARefusedDeployerModuleIsReportedAndTheOthersKeepWorking) {
  TempDir deployers;
  std::filesystem::create_symlink(deployerDir() / "native.so", deployers.path() / "native.so");
  std::filesystem::create_symlink(plugin("hello"), deployers.path() / "hello.so");  // a plugin, not a deployer
  writeFile(deployers.path() / "broken.so", "not an ELF file");
  auto args = runArgs("name = \"x\"\n[[steps]]\nid = \"greet\"\nplugin = \"hello\"\ndeploy = \"native\"\nargs = { name = \"x\" }\n");
  args.insert(args.end(), {"--deployers", deployers.path().string()});
  auto r = plugboard(args);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.err.find("hello.so: refused: 'hello' is a plugin, not a deployer module"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("broken.so: refused:"), std::string::npos) << r.err;
}

TEST_F(DeployTest, DeployersAreListedAndInspectedWithoutLoading) {
  auto list = plugboard({"plugins", "list", "--plugins", dir_.plugins(), "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  auto listed = Json::parse(list.out);
  std::vector<std::string> names;
  for (const auto& d : listed["deployers"]) names.push_back(d.value("name", ""));
  EXPECT_EQ(names, (std::vector<std::string>{"argo", "atp", "container", "native", "process", "python"}));
  EXPECT_EQ(listed["deployers"][3]["deploys"], Json::array({"native"}));

  auto inspect = plugboard({"inspect", (deployerDir() / "process.so").string(), "--load"});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("kind:        deployer"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("deploys:     native"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("  memory (size): "), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("load:        ok"), std::string::npos) << inspect.out;
}

TEST_F(DeployTest, ABadRegistryIsRefusedWithItsLine) {
  const std::string registry = dir_.write("registry.toml", "[plugins.x.\"1.0.0\"]\nnative = 3\n");
  auto args = runArgs("name = \"x\"\n[[steps]]\nid = \"greet\"\nplugin = \"hello\"\nargs = { name = \"x\" }\n");
  args.insert(args.end(), {"--registry", registry});
  auto r = plugboard(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("registry.toml:2:10: x@1.0.0: artifact 'native' must be a path or a table"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace plugboard::testing

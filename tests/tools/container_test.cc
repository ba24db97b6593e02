// The container deployer through the real binary and podman: hello through a container,
// outputs between a container step and a native step, a crash inside the container, a
// deadline that kills it, a missing image, podman missing, Ctrl-C of `run` and SIGTERM of
// `serve`; and after every test, no container left (podman ps -a).
//
// The images come from tests/support/make_test_images.sh (a CTest fixture).
#include <signal.h>

#include <algorithm>

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/argo.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/plugin_dir.h"
#include "tests/support/podman.h"
#include "tests/support/run_report.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

const char* const kHelloImage = "localhost/plugboard-test/hello:latest";
const char* const kCrashyImage = "localhost/plugboard-test/crashy:latest";

// The names of the containers made from this suite's images (tests/support/make_test_images.sh
// labels them) that still exist, running or not: other containers on the machine are not
// this suite's business.
std::string leftContainers() { return containersLeft("label=org.plugboard.test=container-tests"); }

class ContainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(leftContainers(), "") << "containers left by something else";
    writeFile(dir_.path() / "registry.toml",
              std::string("[plugins.hello.\"1.2.0\"]\ncontainer = { image = \"") + kHelloImage +
                  "\" }\n[plugins.crashy.\"1.0.0\"]\ncontainer = { image = \"" + kCrashyImage +
                  "\" }\n[plugins.ghost.\"1.0.0\"]\n"
                  "container = { image = \"localhost/plugboard-test/missing:1\" }\n");
  }
  void TearDown() override { EXPECT_EQ(leftContainers(), "") << "containers left behind"; }

  std::vector<std::string> runArgs(const std::string& workflow,
                                   const std::vector<std::string>& more = {}) {
    return runWithRegistry(dir_, workflow, more);
  }
  TempDir dir_;
};

TEST_F(ContainerTest, HelloAndOutputsPassBetweenAContainerStepAndANativeStep) {
  auto r = run(runArgs(R"(
name = "boxed"
[[steps]]
id = "box"
plugin = "hello"
deploy = "container"
args = { name = "Ada" }
[[steps]]
id = "native"
plugin = "hello"
depends = ["box"]
args = { name = "${steps.box.outputs.parameters.greeting}" }
[[steps]]
id = "back"
plugin = "hello"
deploy = { deployer = "container", channel = "stdio" }
depends = ["native"]
args = { name = "${steps.native.outputs.parameters.greeting}" }
)"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "box")["outputs"]["parameters"]["greeting"], "Hello, Ada!");
  EXPECT_EQ(reportStep(report, "box")["plugin"], "hello@1.2.0");
  EXPECT_EQ(reportStep(report, "native")["outputs"]["parameters"]["greeting"],
            "Hello, Hello, Ada!!");
  EXPECT_EQ(reportStep(report, "back")["outputs"]["parameters"]["greeting"],
            "Hello, Hello, Hello, Ada!!!");
}

TEST_F(ContainerTest, ACrashInsideTheContainerIsAStepErrorAndADeadlineKillsItsContainer) {
  // spin's deadline counts its container's start too: long enough that the call is
  // spinning when it passes, however loaded the machine.
  auto r = run(runArgs(R"(
name = "broken"
[[steps]]
id = "crash"
plugin = "crashy"
deploy = "container"
args = { crash = "segv" }
[[steps]]
id = "spin"
plugin = "crashy"
deploy = { deployer = "container", cancel_grace = "200ms" }
timeout = "3s"
args = { crash = "spin" }
[[steps]]
id = "fine"
plugin = "hello"
deploy = "container"
args = { name = "still here" }
[[steps]]
id = "options"
plugin = "crashy"
args = { getenv = "COLOUR" }
)",
                       // What reaches the host is the configuration's to set, not a step's.
                       {"--config", dir_.write("plugboard.toml", R"([deploy]
crashy = { deployer = "container", env = { COLOUR = "teal" }, memory = "256M", cpus = "1", user = "65534", mounts = ["/etc:/host-etc"] }
)")}));
  ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
  const Json report = Json::parse(r.out);
  const std::string crash = reportStep(report, "crash")["message"];
  EXPECT_EQ(reportStep(report, "crash")["phase"], "Error");
  EXPECT_NE(crash.find("plugin 'crashy' (container)"), std::string::npos) << crash;
  EXPECT_NE(crash.find("killed by signal 11, SIGSEGV"), std::string::npos) << crash;
  EXPECT_EQ(reportStep(report, "spin")["phase"], "Failed");
  EXPECT_NE(
      reportStep(report, "spin")["message"].get<std::string>().find("longer than the specified deadline"),
      std::string::npos)
      << reportStep(report, "spin");
  EXPECT_EQ(report["abandoned_calls"], 0);  // the spinning container was killed
  EXPECT_NE(r.err.find("did not answer a cancel within 200ms and was killed"), std::string::npos)
      << r.err;
  EXPECT_EQ(reportStep(report, "fine")["outputs"]["parameters"]["greeting"], "Hello, still here!");
  // Options reach podman: the variable is set, the default ulimit applies.
  const Json options = reportStep(report, "options");
  EXPECT_EQ(options["phase"], "Succeeded") << options;
  EXPECT_EQ(options["outputs"]["parameters"]["env"], "teal") << options;
  EXPECT_EQ(options["outputs"]["parameters"]["nofile"], "1024") << options;
}

TEST_F(ContainerTest, AMissingImageWithPullNeverIsAClearStepError) {
  auto r = run(runArgs(R"(
name = "missing"
[[steps]]
id = "box"
plugin = "ghost"
deploy = { deployer = "container", pull = "never" }
)"));
  ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
  const std::string message = reportStep(Json::parse(r.out), "box")["message"];
  EXPECT_NE(message.find("plugin ghost@1.0.0 through deployer 'container'"), std::string::npos)
      << message;
  EXPECT_NE(message.find("localhost/plugboard-test/missing:1: image not known"), std::string::npos)
      << message;
  EXPECT_NE(message.find("option 'pull' is 'never'"), std::string::npos) << message;
}

TEST_F(ContainerTest, WithoutPodmanTheDeployerIsUnavailableAndOnlyWorkflowsThatNeedItFail) {
  const std::string config =
      dir_.write("plugboard.toml", "[deployers.container]\npodman = \"/nonexistent/bin/podman\"\n");
  auto boxed = run(runArgs(R"(
name = "boxed"
[[steps]]
id = "native"
plugin = "hello"
args = { name = "Ada" }
[[steps]]
id = "box"
plugin = "hello"
deploy = "container"
args = { name = "Ada" }
)",
                           {"--config", config}));
  EXPECT_EQ(boxed.exit_code, 2) << boxed.err << boxed.out;
  EXPECT_EQ(boxed.out, "");  // nothing ran
  EXPECT_NE(boxed.err.find("step 'box' cannot run: deployer 'container' is unavailable"),
            std::string::npos)
      << boxed.err;
  EXPECT_NE(boxed.err.find("/nonexistent/bin/podman"), std::string::npos) << boxed.err;

  auto plain = run({binary().string(), "run", (sourceDir() / "examples" / "hello.toml").string(),
                    "--plugins", pluginDir().string(), "--config", config});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
}

// Ctrl-C once the launcher says `plugin`'s container started.
RunOptions ctrlCOnceStarted(const std::string& plugin) {
  RunOptions options;
  options.signals = {{SIGINT, "started plugin " + plugin}};
  return options;
}

TEST_F(ContainerTest, CtrlCOfRunRemovesTheContainers) {
  auto r = run(runArgs(R"(
name = "interrupted"
[[steps]]
id = "slow"
plugin = "crashy"
deploy = "container"
args = { sleep_ms = 20000 }
[[steps]]
id = "waiting"
plugin = "hello"
deploy = "container"
args = { name = "x" }
)",
                       {"--log-level", "info"}),
               ctrlCOnceStarted("crashy"));
  EXPECT_EQ(r.exit_code, 130) << r.err << r.out;
  EXPECT_EQ(reportStep(Json::parse(r.out), "slow")["phase"], "Cancelled") << r.out;
}

TEST_F(ContainerTest, SigtermOfServeRemovesTheContainersOfItsRegistryPlugins) {
  PluginDir dir({"echo"}, {});
  const std::string registry = dir_.write(
      "serve-registry.toml", std::string("[plugins.hello.\"1.2.0\"]\ncontainer = { image = \"") +
                                 kHelloImage + "\" }\n[plugins.crashy.\"1.0.0\"]\n" +
                                 "container = { image = \"" + kCrashyImage + "\" }\n");
  const std::string config = dir.write("plugboard.toml", "registry = \"" + registry + "\"\n");
  ServeProcess serve({"--plugins", dir.plugins(), "--config", config});
  HttpClient client(serve.port());
  auto reply = client.request("POST", "/api/v1/template.execute", argoBody("hello", {{"name", "Argo"}}));
  EXPECT_EQ(reply.status, 200);
  EXPECT_NE(reply.body.find("Hello, Argo!"), std::string::npos) << reply.body << serve.output();
  const std::string serving = leftContainers();  // hello's and crashy's, while serving
  EXPECT_EQ(std::count(serving.begin(), serving.end(), '\n'), 2) << serving;
  EXPECT_EQ(serve.stop(SIGTERM), 0) << serve.output();
}

TEST_F(ContainerTest, TheContainersExampleRunsHelloNativelyAsPythonAndFromAnImage) {
  auto r = run({binary().string(), "run", (sourceDir() / "examples" / "containers.toml").string(),
                "--plugins", pluginDir().string(), "--registry",
                (sourceDir() / "examples" / "registry.toml").string(), "--param", "who=Ada",
                "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "container")["outputs"]["parameters"]["greeting"],
            "Hello, Hello, Hello, Ada!!!");
  EXPECT_EQ(reportStep(report, "embedded")["outputs"]["parameters"]["greeting"],
            "Hello, Hello, Hello, Hello, Ada!!!!");
  for (const char* step : {"native", "python", "container", "embedded"}) {
    EXPECT_EQ(reportStep(report, step)["plugin"], "hello@1.2.0") << step;
  }
}

}  // namespace
}  // namespace plugboard::testing

// Argo executor plugins as Argo ships them, run as workflow steps through the real binary
// and podman: a source directory (plugin.yaml + server.py, merged as `argo executor-plugin
// build` merges them), a ConfigMap in the shape of Argo's e2e plugins (tests/support/
// argo_python_plugin: its sidecar answers JSON null for templates that are not its own),
// input parameters a step gives and the sidecar reads from template.inputs.parameters,
// polling of the registry's `polled = true` plugins in `run` as in `serve`, and a name two
// plugins share. The images come from tests/support/make_argo_sidecar_image.sh (a CTest
// fixture); the python image is a local stand-in.
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/argo.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/podman.h"
#include "tests/support/run_report.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

std::filesystem::path fixture(const std::string& file) {
  return sourceDir() / "tests/support/argo_python_plugin" / file;
}

class ArgoSourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "sockets in a container's network namespace need root";
    ASSERT_EQ(containersLeft("name=^plugboard-argo-"), "") << "containers left by something else";
    std::filesystem::create_directory(dir_.path() / "adder");
    dir_.write("adder/plugin.yaml", readFile(fixture("plugin.yaml")));
    dir_.write("adder/server.py", readFile(fixture("server.py")));
    configmap_ = dir_.write("saluter.yaml", readFile(fixture("saluter-executor-plugin-configmap.yaml")));
  }
  void TearDown() override {
    EXPECT_EQ(containersLeft("name=^plugboard-argo-"), "") << "containers left behind";
  }
  void registry(const std::string& text) { dir_.write("registry.toml", text); }
  std::string adder() const { return (dir_.path() / "adder").string(); }

  TempDir dir_;
  std::string configmap_;
};

TEST_F(ArgoSourcesTest, ASourceDirectoryRunsItsServerAndReadsTheStepsInputParameters) {
  registry("[plugins.adder.\"1.0.0\"]\nargo = \"" + adder() + "\"\n" +
           "[plugins.adder-yaml.\"1.0.0\"]\nargo = \"" + adder() + "/plugin.yaml\"\n");
  auto r = run(runWithRegistry(dir_, R"(
name = "sums"
[inputs]
n = 41
[[steps]]
id = "add"
plugin = "adder"
parameters = { value = "${inputs.n}" }
[[steps]]
id = "again"
plugin = "adder-yaml"
depends = ["add"]
args = { add = 10 }
parameters = { value = "${steps.add.outputs.parameters.sum}", unused = true }
[[steps]]
id = "without"
plugin = "adder"
)"));
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  const Json report = Json::parse(r.out);
  const Json add = reportStep(report, "add");
  EXPECT_EQ(add["phase"], "Succeeded") << add;
  EXPECT_EQ(add["outputs"]["parameters"]["sum"], "42") << add;
  const Json again = reportStep(report, "again");
  EXPECT_EQ(again["outputs"]["parameters"]["sum"], "52") << again;
  // Without parameters the template has no inputs: the plugin's own error, as under Argo.
  const Json without = reportStep(report, "without");
  EXPECT_EQ(without["phase"], "Failed") << without;
  EXPECT_EQ(without["message"], "KeyError('value')") << without;
}

TEST_F(ArgoSourcesTest, BadSourcesAndParametersAreClearErrors) {
  std::filesystem::create_directory(dir_.path() / "two");
  dir_.write("two/plugin.yaml", readFile(fixture("plugin.yaml")));
  dir_.write("two/server.py", "print(1)\n");
  dir_.write("two/server.sh", "echo 1\n");
  std::filesystem::create_directory(dir_.path() / "empty");
  registry("[plugins.two.\"1.0.0\"]\nargo = \"" + (dir_.path() / "two").string() + "\"\n" +
           "[plugins.empty.\"1.0.0\"]\nargo = \"" + (dir_.path() / "empty").string() + "\"\n");
  auto r = run(runWithRegistry(dir_, R"(
name = "bad"
[[steps]]
id = "two"
plugin = "two"
[[steps]]
id = "empty"
plugin = "empty"
)"));
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  const Json report = Json::parse(r.out);
  EXPECT_NE(reportStep(report, "two")["message"].get<std::string>().find(
                "has more than one server.* file (server.py, server.sh)"),
            std::string::npos)
      << reportStep(report, "two");
  EXPECT_NE(reportStep(report, "empty")["message"].get<std::string>().find(
                "the directory holds no plugin.yaml"),
            std::string::npos)
      << reportStep(report, "empty");

  auto bad = run({binary().string(), "validate", dir_.write("p.toml", R"(
name = "bad-parameters"
[[steps]]
id = "table"
plugin = "hello"
parameters = { value = { nested = 1 } }
[[steps]]
id = "list"
plugin = "hello"
parameters = ["value"]
[[steps]]
id = "ref"
plugin = "hello"
parameters = { value = "${inputs.nothing}" }
)"),
                  "--plugins", pluginDir().string()});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("step 'table': parameter 'value' must be a string, a number or a boolean"),
            std::string::npos)
      << bad.err;
  EXPECT_NE(bad.err.find("step 'list': 'parameters' must be a table of strings"), std::string::npos)
      << bad.err;
  EXPECT_NE(bad.err.find("step 'ref': ${inputs.nothing}: the workflow has no input 'nothing'"),
            std::string::npos)
      << bad.err;
}

TEST_F(ArgoSourcesTest, RunPollsTheRegistrysPolledSidecarsAndNullMeansNotMine) {
  // The saluter's key is not a name the registry or the plugin directories know, so the
  // step polls: adder (first by name) answers null, old-saluter handles it; quiet, the
  // same sidecar without `polled`, is never asked.
  registry("[plugins.adder.\"1.0.0\"]\nargo = { path = \"" + adder() + "\", polled = true }\n" +
           "[plugins.old-saluter.\"1.0.0\"]\nargo = { path = \"" + configmap_ +
           "\", polled = true }\n" + "[plugins.quiet.\"1.0.0\"]\nargo = \"" + configmap_ + "\"\n");
  auto r = run(runWithRegistry(dir_, R"(
name = "polls"
[[steps]]
id = "named"
plugin = "adder"
parameters = { value = "1" }
[[steps]]
id = "polled"
plugin = "saluter"
poll = true
depends = ["named"]
)"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json report = Json::parse(r.out);
  const Json polled = reportStep(report, "polled");
  EXPECT_EQ(polled["plugin"], "old-saluter@1.0.0") << polled;
  EXPECT_EQ(polled["message"], "Greetings!") << polled;
  EXPECT_EQ(polled["outputs"]["parameters"]["to"], "polled") << polled;
  EXPECT_EQ(r.err.find("quiet"), std::string::npos) << r.err;

  // Without a polled plugin that takes it, nothing executes it, and quiet is not tried.
  registry("[plugins.quiet.\"1.0.0\"]\nargo = \"" + configmap_ + "\"\n");
  auto none = run(runWithRegistry(dir_, R"(
name = "polls"
[[steps]]
id = "polled"
plugin = "saluter"
poll = true
)"));
  EXPECT_EQ(none.exit_code, 1) << none.err << none.out;
  const std::string message = reportStep(Json::parse(none.out), "polled")["message"];
  EXPECT_NE(message.find("no plugin executed the template"), std::string::npos) << message;
  EXPECT_EQ(message.find("quiet"), std::string::npos) << message;
}

TEST_F(ArgoSourcesTest, ServePollsASidecarThatAnswersNullWithoutCountingAnError) {
  registry("[plugins.adder.\"1.0.0\"]\nargo = { path = \"" + adder() + "\", polled = true }\n");
  ServeProcess serve({"--plugins", pluginDir().string(), "--registry",
                      (dir_.path() / "registry.toml").string(), "--poll-unknown"});
  HttpClient client(serve.port());
  auto elsewhere =
      client.request("POST", "/api/v1/template.execute", argoBody("slack", Json::object()));
  EXPECT_EQ(elsewhere.status, 200);
  EXPECT_EQ(elsewhere.body, "{}");
  const std::string metrics = client.request("GET", "/metrics").body;
  EXPECT_EQ(metrics.find("plugboard_poll_errors_total{plugin=\"adder@"), std::string::npos)
      << metrics;
  EXPECT_EQ(serve.stop(), 0);
  EXPECT_EQ(serve.output().find("could not read"), std::string::npos) << serve.output();
}

TEST_F(ArgoSourcesTest, ANameTwoPluginsShareListsTheirVersionsAndDeployers) {
  // Like Argo's e2e hello beside the bundled hello of the plugin directories.
  registry("[plugins.hello.\"0.0.1\"]\nargo = \"" + configmap_ + "\"\n");
  const std::string wf = dir_.write("wf.toml", R"(
name = "hellos"
[[steps]]
id = "which"
plugin = "hello"
)");
  auto r = run({binary().string(), "validate", wf, "--plugins", pluginDir().string(),
                "--registry", (dir_.path() / "registry.toml").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("step 'which': plugin 'hello' is ambiguous: hello@1.2.0 (native), "
                       "hello@0.0.1 (argo); name one as NAME@VERSION"),
            std::string::npos)
      << r.err;
  auto call = run({binary().string(), "call", "hello", "--plugins", pluginDir().string(),
                   "--registry", (dir_.path() / "registry.toml").string()});
  EXPECT_EQ(call.exit_code, 1) << call.err;
  EXPECT_NE(call.err.find("plugin 'hello' is ambiguous: hello@1.2.0 (native), hello@0.0.1 (argo)"),
            std::string::npos)
      << call.err;
  // Named with its version, each runs.
  auto both = run(runWithRegistry(dir_, R"(
name = "hellos"
[[steps]]
id = "argo"
plugin = "hello@0.0.1"
[[steps]]
id = "native"
plugin = "hello@1.2.0"
args = { name = "Ada" }
)"));
  ASSERT_EQ(both.exit_code, 0) << both.err << both.out;
  const Json report = Json::parse(both.out);
  EXPECT_EQ(reportStep(report, "argo")["message"], "Greetings!");
  EXPECT_EQ(reportStep(report, "native")["outputs"]["parameters"]["greeting"], "Hello, Ada!");
}

}  // namespace
}  // namespace plugboard::testing

// The atp deployer with plugins written with the Arcaflow plugin SDK itself: the SDK's
// example_plugin.py and tests/fixtures/atp/sdk/sdk_plugin.py, run by Debian's python3 with
// python3-cbor2 and python3-yaml and the SDK's source from PLUGBOARD_ARCAFLOW_SDK (a
// checkout of arcalot/arcaflow-plugin-sdk-python; PyPI is not used). Without it they skip,
// saying so; tests/tools/atp_test.cc checks the same rules with the bundled plugins, which
// speak the same wire format.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/argo.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/plugin_dir.h"
#include "tests/support/run_report.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

std::string sdkDir() {
  const char* dir = std::getenv("PLUGBOARD_ARCAFLOW_SDK");
  if (dir == nullptr || !fs::is_directory(fs::path(dir) / "src" / "arcaflow_plugin_sdk")) return {};
  return fs::absolute(dir).string();
}

class AtpSdkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sdk_ = sdkDir();
    if (sdk_.empty()) {
      GTEST_SKIP() << "PLUGBOARD_ARCAFLOW_SDK does not name a checkout of "
                      "arcalot/arcaflow-plugin-sdk-python (with src/arcaflow_plugin_sdk); the "
                      "bundled ATP plugins check the same rules (AtpTest.*)";
    }
    const std::string plugin =
        (sourceDir() / "tests" / "fixtures" / "atp" / "sdk" / "sdk_plugin.py").string();
    registry_ = dir_.write("registry.toml",
                           "[plugins.sdk.\"1.0.0\"]\natp = { path = \"" + plugin +
                               "\" }\n[plugins.example.\"1.0.0\"]\natp = { path = \"" + sdk_ +
                               "/example_plugin.py\" }\n[plugins.nosdk.\"1.0.0\"]\natp = { path = \"" +
                               plugin + "\" }\n");
    const std::string env = "env = { PYTHONPATH = \"" + sdk_ + "/src\" }, cache_dir = \"" +
                            (dir_ / "cache").string() + "\"";
    config_ = dir_.write("plugboard.toml",
                         "registry = \"" + registry_ + "\"\n[deploy]\nsdk = { deployer = \"atp\", " +
                             env + " }\nexample = { deployer = \"atp\", " + env + " }\n");
  }
  RunResult plugboardIn(std::vector<std::string> args, const std::string& input = "") {
    for (const std::string& a : std::vector<std::string>{"--config", config_, "--plugins",
                                                         pluginDir().string()})
      args.push_back(a);
    RunOptions options;
    options.input = input;
    return plugboard(std::move(args), options);
  }
  RunResult runWorkflow(const std::string& steps) {
    return plugboardIn({"run", dir_.write("wf.toml", "name = \"wf\"\n" + steps), "--output", "json",
                        "--parallel", "8", "--log-level", "info"});
  }
  std::string sdk_, registry_, config_;
  TempDir dir_;
};

std::string sdkStep(const std::string& id, const std::string& plugin, const std::string& rpc,
                 const std::string& args, const std::string& more = "") {
  return "[[steps]]\nid = \"" + id + "\"\nplugin = \"" + plugin + "\"\nrpc = \"" + rpc +
         "\"\nargs = " + args + "\n" + more;
}

TEST_F(AtpSdkTest, ACancelledStepKeepsTheAnswerOfItsCancelHandler) {
  const std::string config = dir_.write(
      "serve.toml", "registry = \"" + registry_ +
                        "\"\ndefault_timeout = \"2s\"\n[deploy]\nsdk = { deployer = \"atp\", step = "
                        "\"wait\", env = { PYTHONPATH = \"" + sdk_ + "/src\" }, cache_dir = \"" +
                        (dir_ / "cache").string() + "\" }\n");
  PluginDir plugins({"echo"}, {});
  ServeProcess serve({"--plugins", plugins.plugins(), "--config", config});
  HttpClient client(serve.port());
  auto r = client.request("POST", "/api/v1/template.execute", argoBody("sdk", {{"seconds", 30}}));
  ASSERT_EQ(r.status, 200) << r.body << serve.output();
  const Json node = Json::parse(r.body)["node"];
  EXPECT_EQ(node["phase"], "Failed") << r.body;
  EXPECT_NE(node["message"].get<std::string>().find("it answered: output 'cancelled'"),
            std::string::npos)
      << r.body;
  Json parameters = Json::object();
  for (const auto& p : node["outputs"]["parameters"]) parameters[p["name"].get<std::string>()] = p["value"];
  EXPECT_EQ(parameters["output_id"], "cancelled") << r.body;
  EXPECT_TRUE(parameters.contains("waited_ms")) << r.body;
  EXPECT_EQ(serve.stop(), 0);
}

TEST_F(AtpSdkTest, AStepWithoutACancelHandlerDoesNotTakeTheCallsBesideItDown) {
  auto r = runWorkflow(sdkStep("stopped", "sdk", "arcaflow.sleep", "{ seconds = 30 }",
                            "timeout = \"1s\"\n") +
                       sdkStep("beside", "sdk", "arcaflow.wait", "{ seconds = 3 }"));
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  const Json report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "beside")["phase"], "Succeeded") << reportStep(report, "beside");
  EXPECT_EQ(reportStep(report, "beside")["outputs"]["parameters"]["output_id"], "success");
  EXPECT_EQ(r.err.find("did not answer a cancel"), std::string::npos) << r.err;
}

TEST_F(AtpSdkTest, ValidateChecksTheFieldsOfTheChosenOneOfBranchOfTheExamplePlugin) {
  const std::string wf = dir_.write(
      "bad.toml",
      "name = \"bad\"\n" +
          sdkStep("digits", "example", "arcaflow.hello-world",
               "{ name = { _type = \"nickname\", nick = \"123\" } }") +
          sdkStep("half", "example", "arcaflow.hello-world",
               "{ name = { _type = \"fullname\", first_name = \"Arca\" } }"));
  auto v = plugboardIn({"validate", wf});
  EXPECT_NE(v.exit_code, 0) << v.err << v.out;
  const std::string all = v.out + v.err;
  EXPECT_NE(all.find("args.name.nick: does not match the pattern"), std::string::npos) << all;
  EXPECT_NE(all.find("args.name: missing required member 'last_name'"), std::string::npos) << all;
  const std::string good = dir_.write(
      "good.toml", "name = \"good\"\n" + sdkStep("hi", "example", "arcaflow.hello-world",
                                               "{ name = { _type = \"nickname\", nick = \"Arca\" } }"));
  auto ok = plugboardIn({"validate", good});
  EXPECT_EQ(ok.exit_code, 0) << ok.err << ok.out;
  auto r = runWorkflow(sdkStep("hi", "example", "arcaflow.hello-world",
                            "{ name = { _type = \"nickname\", nick = \"Arca\" } }"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(reportStep(Json::parse(r.out), "hi")["outputs"]["parameters"]["message"],
            "Hello, Arca!");
}

TEST_F(AtpSdkTest, ATracebackIsOneLineInTheMessageAndTheRestInTheLog) {
  auto r = runWorkflow(sdkStep("failing", "sdk", "arcaflow.fail", "{ text = \"this\" }"));
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  const std::string message = reportStep(Json::parse(r.out), "failing")["message"];
  EXPECT_NE(message.find("step 'fail' failed: cannot do this (the traceback is in the log)"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_NE(r.err.find("Traceback (most recent call last):"), std::string::npos) << r.err;
}

TEST_F(AtpSdkTest, TypedOutputsStayTyped) {
  auto r = plugboardIn({"call", "sdk", "--rpc", "arcaflow.wait", "--args", R"({"seconds": 0.01})",
                        "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json outputs = Json::parse(r.out)["outputs"];
  EXPECT_TRUE(outputs["values"]["waited_ms"].is_number_integer()) << outputs;
  EXPECT_TRUE(outputs["parameters"]["waited_ms"].is_string()) << outputs;
}

TEST_F(AtpSdkTest, ValidateSaysThatItCouldNotCheckAPluginWithoutItsSdk) {
  const std::string wf = dir_.write(
      "wf.toml", "name = \"wf\"\n" + sdkStep("s", "nosdk", "arcaflow.fail", "{ text = \"x\" }"));
  auto v = plugboardIn({"validate", wf});
  EXPECT_NE(v.exit_code, 0) << v.err << v.out;
  const std::string all = v.out + v.err;
  EXPECT_NE(all.find("its args were not checked"), std::string::npos) << all;
  EXPECT_NE(all.find("No module named 'arcaflow_plugin_sdk'"), std::string::npos) << all;
}

TEST_F(AtpSdkTest, TheTemplatePluginRunsAsAModuleArtifactNamesItsPackage) {
  const char* dir = std::getenv("PLUGBOARD_ARCAFLOW_TEMPLATE");
  if (dir == nullptr || !fs::is_directory(fs::path(dir) / "arcaflow_plugin_template_python")) {
    GTEST_SKIP() << "PLUGBOARD_ARCAFLOW_TEMPLATE does not name a checkout of "
                    "arcalot/arcaflow-plugin-template-python; AtpTest."
                    "APackageWithoutMainRunsItsPluginModuleAndEnvExtendsItsPythonPath checks "
                    "the same layout";
  }
  const std::string reg = dir_.write(
      "template.toml", "[plugins.template-python.\"0.4.0\"]\natp = { module = "
                       "\"arcaflow_plugin_template_python\", path = \"" +
                           fs::absolute(dir).string() + "\" }\n");
  const std::string config = dir_.write(
      "template-config.toml", "registry = \"" + reg +
                                  "\"\n[deploy]\ntemplate-python = { deployer = \"atp\", env = { "
                                  "PYTHONPATH = \"" + sdk_ + "/src\" }, cache_dir = \"" +
                                  (dir_ / "cache").string() + "\" }\n");
  auto r = plugboard({"run",
                      dir_.write("t.toml", "name = \"t\"\n" + sdkStep("hi", "template-python",
                                                                    "arcaflow.hello-world",
                                                                    "{ name = \"Ada\" }")),
                      "--config", config, "--plugins", pluginDir().string(), "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(reportStep(Json::parse(r.out), "hi")["outputs"]["parameters"]["message"]
                .get<std::string>()
                .find("Ada"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace plugboard::testing

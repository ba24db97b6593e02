// The argo deployer through the real binary and podman: an Argo executor plugin written as
// Argo's documentation writes one (tests/support/argo_sidecar: Python's http.server,
// checking the bearer token of /var/run/argo/token) runs from its plugin.yaml between
// native steps, in `serve`, and from the ConfigMap `argo executor-plugin build` writes;
// and every bad input is a clear step error. After every test no container is left
// (podman ps -a), nor the directory of a token. The bundled example (examples/argo.toml,
// plugins/argo/megaphone.py) runs too.
//
// The image comes from tests/support/make_argo_sidecar_image.sh (a CTest fixture).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

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

std::string leftContainers() { return containersLeft("name=^plugboard-argo-"); }

// The token directories of sidecars, in /tmp.
std::vector<std::string> tokenDirectories() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/tmp", ec)) {
    if (e.path().filename().string().starts_with("plugboard-argo-")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string manifest() { return readFile(sourceDir() / "tests/support/argo_sidecar/plugin.yaml"); }

// `text` with every `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

class ArgoDeployerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "sockets in a container's network namespace need root";
    ASSERT_EQ(leftContainers(), "") << "containers left by something else";
    tokens_before_ = tokenDirectories();
    const std::string m = manifest();
    std::string registry =
        "[plugins.argo-greeter.\"1.0.0\"]\nargo = \"" + dir_.write("plugin.yaml", m) + "\"\n";
    const auto add = [&](const std::string& name, const std::string& yaml) {
      registry +=
          "[plugins." + name + ".\"1.0.0\"]\nargo = \"" + dir_.write(name + ".yaml", yaml) + "\"\n";
    };
    add("not-a-plugin", replaced(m, "kind: ExecutorPlugin", "kind: Pod"));
    // The same sidecar, which the configuration places with reach = "publish".
    add("argo-published",
        replaced(replaced(m, "  name: argo-greeter\n", "  name: argo-published\n"),
                 "value: argo-greeter", "value: argo-published"));
    add("no-port", replaced(m, "      ports:\n        - containerPort: 4355\n", ""));
    add("ghost", replaced(m, "localhost/plugboard-test/argo-sidecar:latest",
                          "localhost/plugboard-test/missing:1"));
    writeFile(dir_.path() / "registry.toml", registry);
  }
  void TearDown() override {
    EXPECT_EQ(leftContainers(), "") << "containers left behind";
    EXPECT_EQ(tokenDirectories(), tokens_before_) << "token directories left behind";
  }

  std::vector<std::string> runArgs(const std::string& workflow,
                                   const std::vector<std::string>& more = {}) {
    return runWithRegistry(dir_, workflow, more);
  }
  TempDir dir_;
  std::vector<std::string> tokens_before_;
};

TEST_F(ArgoDeployerTest, TheArgoExampleRunsTheBundledPluginBetweenNativeSteps) {
  auto r = run({binary().string(), "run", (sourceDir() / "examples" / "argo.toml").string(),
                "--plugins", pluginDir().string(), "--registry",
                (sourceDir() / "examples" / "registry.toml").string(), "--param", "who=Ada",
                "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "argo")["plugin"], "megaphone@1.0.0");
  EXPECT_EQ(reportStep(report, "argo")["outputs"]["parameters"]["text"], "HELLO, ADA!!");
  EXPECT_EQ(reportStep(report, "back")["outputs"]["parameters"]["greeting"],
            "Hello, HELLO, ADA!!!");
}

TEST_F(ArgoDeployerTest, TheSidecarTakesANativeStepsOutputAndHandsItsOwnToTheNext) {
  auto r = run(runArgs(R"(
name = "mixed"
[[steps]]
id = "native"
plugin = "hello"
args = { name = "Ada" }
[[steps]]
id = "argo"
plugin = "argo-greeter"
depends = ["native"]
args = { name = "${steps.native.outputs.parameters.greeting}" }
[[steps]]
id = "back"
plugin = "hello"
depends = ["argo"]
args = { name = "${steps.argo.outputs.parameters.greeting}" }
[[steps]]
id = "requeued"
plugin = "argo-greeter"
depends = ["argo"]
args = { mode = "slowly", name = "later" }
[[steps]]
id = "busy"
plugin = "argo-greeter"
deploy = { deployer = "argo", backoff = "50ms" }
args = { mode = "busy", name = "patient" }
[[steps]]
id = "published"
plugin = "argo-published"
args = { name = "over a published port" }
)",
                       // How the sidecar is reached is the configuration's, not a step's.
                       {"--config", dir_.write("plugboard.toml", R"([deploy]
argo-published = { deployer = "argo", reach = "publish" }
)")}));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json report = Json::parse(r.out);
  const Json argo = reportStep(report, "argo");
  EXPECT_EQ(argo["outputs"]["parameters"]["greeting"], "Hello, Hello, Ada!!") << argo;
  EXPECT_EQ(argo["outputs"]["parameters"]["workflow"], "mixed") << argo;
  EXPECT_EQ(argo["outputs"]["parameters"]["template"], "argo") << argo;
  EXPECT_EQ(argo["message"], "greeted Hello, Ada!") << argo;
  EXPECT_EQ(argo["plugin"], "argo-greeter@1.0.0") << argo;
  EXPECT_EQ(reportStep(report, "back")["outputs"]["parameters"]["greeting"],
            "Hello, Hello, Hello, Ada!!!");
  const Json requeued = reportStep(report, "requeued");
  EXPECT_EQ(requeued["outputs"]["parameters"]["greeting"], "Hello, later!") << requeued;
  EXPECT_EQ(requeued["calls"], 2) << requeued;  // Running with requeue 1s, then Succeeded
  EXPECT_EQ(reportStep(report, "busy")["outputs"]["parameters"]["greeting"], "Hello, patient!");
  EXPECT_EQ(reportStep(report, "published")["outputs"]["parameters"]["greeting"],
            "Hello, over a published port!");
}

TEST_F(ArgoDeployerTest, EveryBadInputIsAClearStepError) {
  auto r = run(runArgs(R"(
name = "bad"
[[steps]]
id = "garbage"
plugin = "argo-greeter"
args = { mode = "garbage" }
[[steps]]
id = "boom"
plugin = "argo-greeter"
args = { mode = "boom" }
[[steps]]
id = "phase"
plugin = "argo-greeter"
args = { mode = "phase" }
[[steps]]
id = "hang"
plugin = "argo-greeter"
deploy = { deployer = "argo", tries = 1 }
timeout = "2s"
args = { mode = "hang" }
[[steps]]
id = "token"
plugin = "argo-greeter"
deploy = { deployer = "argo", env = { EXPECTED_TOKEN = "not-the-token" } }
args = { name = "x" }
# Long enough for its Python to start and say so while the other sidecars start too
# (under a sanitizer on a loaded machine, 1s was not).
[[steps]]
id = "silent"
plugin = "argo-greeter"
deploy = { deployer = "argo", env = { NO_LISTEN = "1" }, start_timeout = "4s" }
args = { name = "x" }
[[steps]]
id = "kind"
plugin = "not-a-plugin"
[[steps]]
id = "port"
plugin = "no-port"
[[steps]]
id = "ghost"
plugin = "ghost"
)"));
  ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
  const Json report = Json::parse(r.out);
  const auto expectStep = [&](const std::string& id, const std::string& phase,
                              const std::vector<std::string>& parts) {
    const Json step = reportStep(report, id);
    EXPECT_EQ(step["phase"], phase) << step;
    const std::string message = step["message"];
    for (const auto& part : parts)
      EXPECT_NE(message.find(part), std::string::npos) << id << ": " << message;
  };
  expectStep("garbage", "Error",
             {"plugin 'argo-greeter' (argo)", "the reply is not JSON", "this is not JSON"});
  expectStep("boom", "Error", {"plugin 'argo-greeter' (argo): 500 Internal Server Error: boom"});
  expectStep(
      "phase", "Error",
      {"node.phase is \"Exploded\"", "expected Succeeded, Failed, Error, Running or Pending"});
  expectStep("hang", "Failed", {"longer than the specified deadline"});
  expectStep("token", "Error", {"403 Forbidden: forbidden"});
  expectStep("silent", "Error",
             {"plugin 'argo-greeter' (image localhost/plugboard-test/argo-sidecar:latest)",
              "did not open port 4355 within 4000ms", "not listening, as asked"});
  expectStep("kind", "Error", {"not an ExecutorPlugin manifest: kind is 'Pod'"});
  expectStep("port", "Error", {"spec.sidecar.container.ports: at least one port is mandatory"});
  expectStep("ghost", "Error",
             {"plugin 'argo-greeter' (image localhost/plugboard-test/missing:1)",
              "ended before it opened port 4355", "image not known"});
  EXPECT_EQ(report["abandoned_calls"], 0);
}

TEST_F(ArgoDeployerTest, ACrashOfTheSidecarIsAStepErrorWithItsLastOutput) {
  auto r = run(runArgs(R"(
name = "crash"
[[steps]]
id = "crash"
plugin = "argo-greeter"
deploy = { deployer = "argo", backoff = "100ms", tries = 20 }
args = { mode = "crash" }
)"));
  ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
  const Json step = reportStep(Json::parse(r.out), "crash");
  EXPECT_EQ(step["phase"], "Error") << step;
  const std::string message = step["message"];
  EXPECT_NE(message.find("its sidecar ended: exited with code 3"), std::string::npos) << message;
  EXPECT_NE(message.find("crashing as asked"), std::string::npos) << message;
}

TEST_F(ArgoDeployerTest, CtrlCRemovesTheSidecar) {
  RunOptions options;
  options.signals = {{SIGINT, "started plugin argo-greeter"}};
  auto r = run(runArgs(R"(
name = "interrupted"
[[steps]]
id = "hang"
plugin = "argo-greeter"
args = { mode = "hang" }
)",
                       {"--log-level", "info"}),
               options);
  EXPECT_EQ(r.exit_code, 130) << r.err << r.out;
  EXPECT_EQ(reportStep(Json::parse(r.out), "hang")["phase"], "Cancelled") << r.out;
}

TEST_F(ArgoDeployerTest, ServeAnswersArgoThroughTheSidecarOfAPluginYamlAndOfItsConfigMap) {
  // The ConfigMap `argo executor-plugin build` writes from the same manifest
  // (workflow/util/plugin/configmap.go): the container as YAML text under data.
  const std::string config_map = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-greeter-executor-plugin
  labels:
    workflows.argoproj.io/configmap-type: ExecutorPlugin
  annotations:
    plugboard/version: "1.0.1"
data:
  sidecar.automountServiceAccountToken: "false"
  sidecar.container: |
    name: cm-greeter-executor-plugin
    image: localhost/plugboard-test/argo-sidecar:latest
    imagePullPolicy: Never
    command: [python3, -u]
    args: [/plugin/server.py]
    env:
    - {name: PLUGIN_NAME, value: cm-greeter}
    ports:
    - containerPort: 4355
    resources:
      requests: {cpu: 100m, memory: 32Mi}
      limits: {cpu: "1", memory: 128Mi}
    securityContext:
      runAsUser: 8737
)";
  const std::string registry =
      dir_.write("serve-registry.toml", "[plugins.argo-greeter.\"1.0.0\"]\nargo = \"" +
                                            (dir_.path() / "plugin.yaml").string() + "\"\n" +
                                            "[plugins.cm-greeter.\"1.0.1\"]\nargo = { path = \"" +
                                            dir_.write("configmap.yaml", config_map) + "\" }\n");
  const std::string config = dir_.write("plugboard.toml", "registry = \"" + registry + "\"\n");
  ServeProcess serve({"--plugins", pluginDir().string(), "--config", config});
  HttpClient client(serve.port());
  auto reply = client.request("POST", "/api/v1/template.execute",
                              argoBody("argo-greeter", {{"name", "Argo"}}));
  EXPECT_EQ(reply.status, 200) << serve.output();
  const Json body = Json::parse(reply.body, nullptr, false);
  EXPECT_EQ(body["node"]["phase"], "Succeeded") << reply.body;
  EXPECT_NE(reply.body.find(R"({"name":"greeting","value":"Hello, Argo!"})"), std::string::npos)
      << reply.body;
  EXPECT_NE(reply.body.find(R"({"name":"workflow","value":"wf"})"), std::string::npos)
      << reply.body;
  EXPECT_NE(reply.body.find(R"({"name":"template","value":"t"})"), std::string::npos) << reply.body;
  // The plugin of the ConfigMap, by the alias Argo's container names use.
  reply = client.request("POST", "/api/v1/template.execute",
                         argoBody("cm-greeter-executor-plugin", {{"name", "ConfigMap"}}));
  EXPECT_EQ(reply.status, 200) << serve.output();
  EXPECT_NE(reply.body.find(R"({"name":"greeting","value":"Hello, ConfigMap!"})"),
            std::string::npos)
      << reply.body << serve.output();
  const std::string serving = leftContainers();  // one sidecar per plugin while serving
  EXPECT_EQ(std::count(serving.begin(), serving.end(), '\n'), 2) << serving;
  EXPECT_EQ(serve.stop(SIGTERM), 0) << serve.output();
}

TEST_F(ArgoDeployerTest, ASidecarAlreadyRunningIsCalledByUrlWithItsToken) {
  // A sidecar started by someone else, its port published on this machine.
  const std::string name = "plugboard-argo-url-" + std::to_string(getpid());
  const std::string token = "abcdefghabcdefghabcdefghabcdefgh";
  std::filesystem::create_directory(dir_.path() / "token");
  writeFile(dir_.path() / "token" / "token", token);
  std::filesystem::permissions(dir_.path(), std::filesystem::perms(0755));
  std::filesystem::permissions(dir_.path() / "token", std::filesystem::perms(0755));
  std::filesystem::permissions(dir_.path() / "token" / "token", std::filesystem::perms(0644));
  auto started = run({"podman", "--runtime", "runc", "--cgroup-manager", "cgroupfs", "run",
                      "--detach", "--rm", "--name", name, "--publish", "127.0.0.1::4355",
                      "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096", "--volume",
                      (dir_.path() / "token").string() + ":/var/run/argo:ro",
                      "localhost/plugboard-test/argo-sidecar:latest"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const std::string port = run({"podman", "port", name, "4355/tcp"}).out;  // 127.0.0.1:N
  const std::string url = "http://" + port.substr(0, port.find('\n'));
  writeFile(dir_.path() / "registry.toml",
            "[plugins.argo-greeter.\"1.0.0\"]\nargo = { url = \"" + url +
                "\", name = \"argo-greeter\", token_file = \"" +
                (dir_.path() / "token" / "token").string() + "\" }\n");
  // The sidecar may still be starting: the deployer tries again while it refuses.
  auto r = run(runArgs(R"(
name = "remote"
[[steps]]
id = "remote"
plugin = "argo-greeter"
deploy = { deployer = "argo", backoff = "200ms", tries = 20 }
args = { name = "far away" }
)"));
  run({"podman", "rm", "--force", "--time", "0", name});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(reportStep(Json::parse(r.out), "remote")["outputs"]["parameters"]["greeting"],
            "Hello, far away!");
}

}  // namespace
}  // namespace plugboard::testing

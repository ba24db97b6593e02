// Argo workflows whose templates are executor-plugin templates answered by Argo sidecars,
// run locally by `plugboard run` as Argo's e2e suite runs its own on a cluster
// (test/e2e/executor_plugins_test.go in argo-workflows): a plugin from a directory of
// ConfigMaps (`--executor-plugins`), fifteen calls from a withSequence under parallelism 6,
// and a plugin the workflow brings itself (spec.executorPlugins, which then replaces the
// directory's). The ConfigMap is tests/support/argo_python_plugin's, in the shape of
// Argo's e2e ones; its image is the local stand-in of make_argo_sidecar_image.sh.
#include <unistd.h>

#include <regex>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/podman.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

class ArgoPluginWorkflowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "sockets in a container's network namespace need root";
    ASSERT_EQ(containersLeft("name=^plugboard-argo-"), "") << "containers left by something else";
    std::filesystem::create_directory(dir_.path() / "plugins");
    writeFile(dir_.path() / "plugins/saluter.yaml",
              readFile(sourceDir() / "tests/support/argo_python_plugin/saluter-executor-plugin-configmap.yaml"));
  }
  void TearDown() override {
    EXPECT_EQ(containersLeft("name=^plugboard-argo-"), "") << "containers left behind";
  }
  Json run(const std::string& yaml) {
    last_ = plugboard({"run", dir_.write("wf.yaml", yaml), "--plugins", pluginDir().string(),
                       "--executor-plugins", (dir_.path() / "plugins").string(), "--output",
                       "json"});
    auto doc = Json::parse(last_.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << last_.out << last_.err;
    return doc.is_discarded() ? Json() : doc;
  }

  TempDir dir_;
  RunResult last_;
};

TEST_F(ArgoPluginWorkflowTest, ATemplateOfADirectorysPluginSucceedsWithItsMessageAndOutput) {
  auto doc = run(R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: template-executor-
spec:
  entrypoint: main
  templates:
    - name: main
      plugin:
        saluter: { }
)");
  ASSERT_EQ(last_.exit_code, 0) << last_.err << last_.out;
  // What Argo's e2e test asks of its own: the workflow's node has the plugin's message and
  // one output parameter.
  const Json n = doc["status"]["nodes"][doc["metadata"]["name"].get<std::string>()];
  EXPECT_NE(n["message"].get<std::string>().find("Greetings"), std::string::npos) << n.dump(2);
  ASSERT_EQ(n["outputs"]["parameters"].size(), 1u) << n.dump(2);
  EXPECT_EQ(n["outputs"]["parameters"][0]["value"], "main");
}

TEST_F(ArgoPluginWorkflowTest, FifteenCallsOfASequenceUnderParallelismSix) {
  auto doc = run(R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: massive-executor-
spec:
  entrypoint: main
  parallelism: 6
  templates:
    - name: main
      steps:
        - - name: fanout
            template: salute
            withSequence:
              count: "15"
            arguments:
              parameters:
                - name: idx
                  value: "{{item}}"
    - name: salute
      inputs:
        parameters:
          - name: idx
      plugin:
        saluter: {}
)");
  ASSERT_EQ(last_.exit_code, 0) << last_.err << last_.out;
  EXPECT_EQ(doc["status"]["phase"], "Succeeded");
  int fanout = 0;
  for (const auto& [id, n] : doc["status"]["nodes"].items()) {
    if (!std::regex_match(n["displayName"].get<std::string>(), std::regex(R"(fanout\(\d+:\d+\))"))) continue;
    ++fanout;
    EXPECT_EQ(n["phase"], "Succeeded") << n.dump(2);
    EXPECT_EQ(n["type"], "Plugin");
  }
  EXPECT_EQ(fanout, 15) << doc["status"].dump(2);
}

TEST_F(ArgoPluginWorkflowTest, AWorkflowsOwnPluginReplacesTheDirectorysOnes) {
  // The directory's ConfigMap, with its name and key changed, brought by the workflow.
  auto doc = run(R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: workflow-level-template-executor-
spec:
  entrypoint: main
  executorPlugins:
    - metadata:
        name: own-saluter
      spec:
        sidecar:
          container:
            name: own-saluter
            image: localhost/plugboard-test/argo-python:latest
            imagePullPolicy: Never
            command: [python, -c]
            args:
              - |
                import json
                from http.server import BaseHTTPRequestHandler, HTTPServer
                class Own(BaseHTTPRequestHandler):
                    def do_POST(self):
                        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length"))))
                        plugin = request["template"].get("plugin", {})
                        body = None
                        if "ownSaluter" in plugin:
                            body = {"node": {"phase": "Succeeded", "message": "Own greetings!",
                                    "outputs": {"parameters": [{"name": "own-foo", "value": "own-bar"}]}}}
                        self.send_response(200)
                        self.end_headers()
                        self.wfile.write(json.dumps(body).encode())
                HTTPServer(("", 4358), Own).serve_forever()
            ports:
              - containerPort: 4358
            resources:
              limits: {cpu: 200m, memory: 64Mi}
              requests: {cpu: 100m, memory: 32Mi}
            securityContext:
              allowPrivilegeEscalation: false
              capabilities: {drop: [ALL]}
              readOnlyRootFilesystem: true
              runAsNonRoot: true
              runAsUser: 1000
  templates:
    - name: main
      plugin:
        ownSaluter: {}
    - name: not-here
      plugin:
        saluter: {}
)");
  ASSERT_EQ(last_.exit_code, 0) << last_.err << last_.out;
  const Json n = doc["status"]["nodes"][doc["metadata"]["name"].get<std::string>()];
  EXPECT_NE(n["message"].get<std::string>().find("Own greetings"), std::string::npos) << n.dump(2);
  ASSERT_EQ(n["outputs"]["parameters"].size(), 1u);
  EXPECT_EQ(n["outputs"]["parameters"][0]["name"], "own-foo");
  EXPECT_EQ(n["outputs"]["parameters"][0]["value"], "own-bar");
}

}  // namespace
}  // namespace plugboard::testing

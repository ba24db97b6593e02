// `plugboard run` of Argo workflows whose container and script templates declare output
// parameters, through the real binary, the container deployer and podman, on the stand-in
// images of tests/support/make_argo_example_images.sh: each output comes out of its
// container through the wrapper (deployers/container/step_wrapper.cc), whatever the file
// at its path is and whoever the image's user is, and nothing is left behind (no
// container, nothing in $TMPDIR), also after Ctrl-C and a timeout.
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/argo.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/podman.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Every container of a workflow's step is named so (deployers/container/template_run.h).
const char* const kOurs = "name=plugboard-step-";
// An image whose USER is nobody, made from the busybox stand-in (SetUpTestSuite).
const char* const kNobodyImage = "localhost/plugboard-test/busybox-user-nobody:latest";

const std::vector<std::string> kPodman = {"podman", "--runtime", "runc", "--cgroup-manager",
                                          "cgroupfs"};

Json node(const Json& status, const std::string& name) {
  for (const auto& [id, n] : status["nodes"].items()) {
    if (n.value("displayName", "") == name) return n;
  }
  return nullptr;
}

std::string parameter(const Json& n, const std::string& name) {
  for (const auto& p : n["outputs"]["parameters"]) {
    if (p["name"] == name) return p.value("value", "<no value>");
  }
  return "<none>";
}

std::string workflow(const std::string& body) { return argoWorkflow(body); }

// A busybox container running `command` (YAML flow list) with the output parameter `x`
// read from /tmp/x, with `fallback` as its default when given.
std::string outputX(const std::string& command, const std::string& fallback = "") {
  std::string body = R"(      container:
        image: busybox
        command: )" + command + R"(
      outputs:
        parameters:
          - name: x
            valueFrom:
              path: /tmp/x
)";
  if (!fallback.empty()) body += "              default: " + fallback + "\n";
  return workflow(body);
}

class ArgoContainerRunTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    auto exists = run({"podman", "image", "exists", kNobodyImage});
    if (exists.exit_code == 0) return;
    TempDir context;
    context.write("Containerfile", "FROM docker.io/library/busybox:latest\nUSER 65534:65534\n");
    auto argv = kPodman;
    argv.insert(argv.end(), {"build", "--pull=never", "--tag", kNobodyImage, "--file",
                             (context / "Containerfile").string(), context.path().string()});
    auto built = run(argv);
    ASSERT_EQ(built.exit_code, 0) << built.out << built.err;
  }

  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "container templates run with rootful podman: needs root";
    fs::create_directories(tmp_);
  }

  void TearDown() override {
    if (geteuid() != 0) return;
    EXPECT_EQ(containersLeft(kOurs), "");
    // Nothing the run made stays in its $TMPDIR (a script's directory, a copy).
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(tmp_)) left.push_back(e.path().string());
    EXPECT_TRUE(left.empty()) << left.front();
  }

  RunResult runYaml(const std::string& yaml, RunOptions options = {},
                    std::vector<std::string> more = {}) {
    options.env.push_back("TMPDIR=" + tmp_.string());
    std::vector<std::string> args = {"run", dir_.write("wf.yaml", yaml), "--plugins",
                                     pluginDir().string(), "--output", "json"};
    args.insert(args.end(), more.begin(), more.end());
    return plugboard(args, options);
  }

  Json status(const RunResult& r) {
    auto doc = Json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << r.out << r.err;
    return doc.is_discarded() ? Json() : doc["status"];
  }

  TempDir dir_;
  fs::path tmp_ = dir_ / "tmp";
};

TEST_F(ArgoContainerRunTest, OutputsComeOutOfTheContainerAndTheNextStepReadsThem) {
  auto r = runYaml(workflow(R"(      steps:
        - - name: write
            template: write
        - - name: image-entrypoint
            template: argosay
        - - name: read
            template: read
            arguments:
              parameters:
                - name: a
                  value: "{{steps.write.outputs.parameters.hello}}"
                - name: b
                  value: "{{steps.image-entrypoint.outputs.parameters.said}}"
    - name: write
      container:
        image: busybox
        command: [sh, -c]
        args: ["mkdir -p /tmp/out && printf 'hello world\n' > /tmp/out/hello.txt; echo done"]
      outputs:
        parameters:
          - name: hello
            valueFrom:
              path: /tmp/out/hello.txt
    - name: argosay
      container:
        image: argoproj/argosay:v2
        args: [echo, said by the image's entrypoint, /tmp/said]
      outputs:
        parameters:
          - name: said
            valueFrom:
              path: /tmp/said
    - name: read
      inputs:
        parameters:
          - name: a
          - name: b
      script:
        image: python:alpine3.23
        command: [python]
        source: |
          print("{{inputs.parameters.a}} / {{inputs.parameters.b}}")
)"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto s = status(r);
  EXPECT_EQ(parameter(node(s, "write"), "hello"), "hello world");  // one newline trimmed
  EXPECT_EQ(node(s, "write")["outputs"]["result"], "done");
  // No command in the template: the image's entrypoint (argosay) ran under the wrapper.
  EXPECT_EQ(parameter(node(s, "image-entrypoint"), "said"), "said by the image's entrypoint");
  EXPECT_EQ(node(s, "read")["outputs"]["result"],
            "hello world / said by the image's entrypoint");
}

TEST_F(ArgoContainerRunTest, AMissingFileTakesItsDefaultElseTheStepIsAnError) {
  const std::string outputs = R"(      container:
        image: alpine:3.23
        command: [sh, -c, "echo ran"]
      outputs:
        parameters:
          - name: absent
            valueFrom:
              path: /tmp/not-written
)";
  auto with_default = runYaml(workflow(outputs + "              default: fallback\n"));
  ASSERT_EQ(with_default.exit_code, 0) << with_default.err << with_default.out;
  EXPECT_EQ(parameter(node(status(with_default), "wf"), "absent"), "fallback");

  auto without = runYaml(workflow(outputs));
  EXPECT_EQ(without.exit_code, 1) << without.err << without.out;
  auto n = node(status(without), "wf");
  EXPECT_EQ(n["phase"], "Error") << n;
  const std::string message = n.value("message", "");
  EXPECT_NE(message.find("output parameter 'absent'"), std::string::npos) << message;
  EXPECT_NE(message.find("/tmp/not-written"), std::string::npos) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
}

TEST_F(ArgoContainerRunTest, ADirectoryAtThePathIsAnErrorNamingIt) {
  auto r = runYaml(workflow(R"(      container:
        image: busybox
        command: [mkdir, -p, /tmp/out/inner]
      outputs:
        parameters:
          - name: dir
            valueFrom:
              path: /tmp/out
)"));
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  auto n = node(status(r), "wf");
  EXPECT_EQ(n["phase"], "Error") << n;
  EXPECT_NE(n.value("message", "").find("output parameter 'dir': cannot read /tmp/out from the "
                                        "container: it is not a regular file"),
            std::string::npos)
      << n;
}

TEST_F(ArgoContainerRunTest, AFileOverTheLimitIsRefusedAndOneAtItIsRead) {
  const std::string yaml = R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: wf
spec:
  entrypoint: main
  arguments:
    parameters:
      - name: size
  templates:
    - name: main
      container:
        image: busybox
        command: [sh, -c, "head -c $0 /dev/zero | tr '\\0' x > /tmp/big"]
        args: ["{{workflow.parameters.size}}"]
      outputs:
        parameters:
          - name: big
            valueFrom:
              path: /tmp/big
)";
  auto over = runYaml(yaml, {}, {"--param", "size=1048577"});
  EXPECT_EQ(over.exit_code, 1) << over.err << over.out;
  auto n = node(status(over), "wf");
  EXPECT_EQ(n["phase"], "Error") << n;
  EXPECT_NE(n.value("message", "").find("output parameter 'big'"), std::string::npos) << n;
  EXPECT_NE(n.value("message", "").find("it holds more than 1048576 bytes"), std::string::npos)
      << n;

  auto at = runYaml(yaml, {}, {"--param", "size=1048576"});
  ASSERT_EQ(at.exit_code, 0) << at.err.substr(0, 2000);
  EXPECT_EQ(parameter(node(status(at), "wf"), "big"), std::string(1048576, 'x'));
}

TEST_F(ArgoContainerRunTest, ALinkIsResolvedInTheContainersRootNeverOnThisMachine) {
  // This machine's file, at a path the container does not have.
  const std::string secret = dir_.write("secret.txt", "this machine's secret\n");
  auto r = runYaml(workflow(R"(      container:
        image: busybox
        command: [sh, -c]
        args:
          - ln -s )" + secret + R"( /tmp/out-abs && ln -s ../../../../../..)" + secret +
                                R"( /tmp/out-rel && ln -s /etc/passwd /tmp/passwd
      outputs:
        parameters:
          - name: absolute
            valueFrom:
              path: /tmp/out-abs
              default: not followed
          - name: relative
            valueFrom:
              path: /tmp/out-rel
              default: not followed
          - name: passwd
            valueFrom:
              path: /tmp/passwd
)"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto n = node(status(r), "wf");
  EXPECT_EQ(parameter(n, "absolute"), "not followed");
  EXPECT_EQ(parameter(n, "relative"), "not followed");
  // The image's /etc/passwd (the stand-in's two lines), not this machine's.
  EXPECT_EQ(parameter(n, "passwd"),
            "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false");
}

TEST_F(ArgoContainerRunTest, AnImagesNonRootUserWritesAndItsOutputsComeOut) {
  auto r = runYaml(workflow(std::string(R"(      container:
        image: )") + kNobodyImage + R"(
        command: [sh, -c, "umask 077; id -u > /tmp/uid; ls -l /tmp/uid"]
      outputs:
        parameters:
          - name: uid
            valueFrom:
              path: /tmp/uid
)"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto n = node(status(r), "wf");
  EXPECT_EQ(parameter(n, "uid"), "65534");  // its file readable by nobody alone
  EXPECT_EQ(n["outputs"]["result"].get<std::string>().substr(0, 10), "-rw-------");
}

TEST_F(ArgoContainerRunTest, ExitCodesAndSignalsAreTheCommandsAndOutputsAreStillSaved) {
  auto r = runYaml(outputX(R"([sh, -c, "echo saved > /tmp/x; echo partial; exit 3"])"));
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  auto n = node(status(r), "wf");
  EXPECT_EQ(n["phase"], "Failed") << n;
  EXPECT_EQ(n["message"], "main: Error (exit code 3)");
  EXPECT_EQ(n["outputs"]["exitCode"], "3");
  EXPECT_EQ(n["outputs"]["result"], "partial");
  EXPECT_EQ(parameter(n, "x"), "saved");

  // Killed by a signal: 128 + its number, as podman reports a container's main process.
  auto killed = runYaml(outputX(R"([sh, -c, "echo saved > /tmp/x; kill -TERM $$"])"));
  EXPECT_EQ(killed.exit_code, 1) << killed.err << killed.out;
  auto k = node(status(killed), "wf");
  EXPECT_EQ(k["message"], "main: Error (exit code 143)") << k;
  EXPECT_EQ(parameter(k, "x"), "saved");

  // A command the image does not have: 127, as podman reports it.
  auto missing = runYaml(outputX(R"([no-such-command])", "none"));
  auto m = node(status(missing), "wf");
  EXPECT_EQ(m["message"], "main: Error (exit code 127)") << m;
}

TEST_F(ArgoContainerRunTest, ACommandWritingIntoTheOutputsChannelGetsAnErrorNotAHang) {
  // The wrapper's descriptor 3 reached through /proc: what the command writes there is
  // read as records, checked, and refused.
  auto r = runYaml(outputX(R"([sh, -c, "printf 'file 999999\nxx' > /proc/$PPID/fd/3; echo real > /tmp/x"])"));
  auto n = node(status(r), "wf");
  if (containersGetUserNamespaces()) {
    // In a user namespace of its own the command cannot even open that descriptor (its
    // pipe belongs to the host's root): the file's value comes out, nothing else.
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
    EXPECT_EQ(parameter(n, "x"), "real") << n;
    return;
  }
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_EQ(n["phase"], "Error") << n;
  EXPECT_NE(n.value("message", "").find("is not the wrapper's records"), std::string::npos) << n;
}

TEST_F(ArgoContainerRunTest, CtrlCLeavesNoContainerAndNoDirectory) {
  RunOptions options;
  options.signals.push_back({SIGINT, " runs template 'main'"});
  auto r = runYaml(workflow(R"(      script:
        image: busybox
        command: [sh]
        source: |
          echo started > /tmp/x
          sleep 600
      outputs:
        parameters:
          - name: x
            valueFrom:
              path: /tmp/x
)"),
                   options, {"--log-level", "debug"});
  EXPECT_EQ(r.exit_code, 130) << r.err << r.out;
  // TearDown: no container, nothing in $TMPDIR.
}

TEST_F(ArgoContainerRunTest, ATimeoutLeavesNoContainerAndNoDirectory) {
  auto r = runYaml(workflow(R"(      timeout: 3s
      script:
        image: busybox
        command: [sh]
        source: |
          echo started > /tmp/x
          sleep 600
      outputs:
        parameters:
          - name: x
            valueFrom:
              path: /tmp/x
)"));
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_EQ(node(status(r), "wf")["phase"], "Failed") << r.out;
}

}  // namespace
}  // namespace plugboard::testing

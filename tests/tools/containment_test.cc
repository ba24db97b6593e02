// What a workflow file (and whoever may only pass its parameters) can get from the host,
// through the real binary, the container and argo deployers and rootful podman, on the
// stand-in images of tests/support/make_argo_example_images.sh (docs/security.md): an
// image that podman would read as an option, a securityContext beyond its ceiling, an
// executor plugin asking for root or capabilities, and a step's deployer options that reach
// the host are refused, in `validate` and in `run`, and a marker file on the host is never
// written; a container's root is no root outside, with no new privileges and only the
// baseline capabilities.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/argo.h"
#include "tests/support/eventually.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/podman.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string workflow(const std::string& templates, const std::string& spec_more = "") {
  return argoWorkflow(templates, spec_more);
}

class ContainmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "container templates run with rootful podman: needs root";
    fs::create_directories(tmp_);
    // The marker a step would write on the host through an escape: in a directory of the
    // host's that no container is given.
    marker_ = dir_ / "escaped";
  }
  void TearDown() override {
    if (geteuid() != 0) return;
    EXPECT_FALSE(fs::exists(marker_)) << "a step wrote on the host";
    EXPECT_EQ(containersLeft("name=plugboard-"), "");
  }

  RunResult plugboardOn(const std::string& verb, const std::string& yaml,
                        std::vector<std::string> more = {}) {
    RunOptions options;
    options.env.push_back("TMPDIR=" + tmp_.string());
    std::vector<std::string> args = {verb, dir_.write("wf.yaml", yaml), "--plugins",
                                     pluginDir().string()};
    if (verb == "run") args.insert(args.end(), {"--output", "json"});
    args.insert(args.end(), more.begin(), more.end());
    return plugboard(args, options);
  }

  // The step's message and its result, from `run -o json`.
  static Json mainNode(const RunResult& r) {
    const Json doc = Json::parse(r.out, nullptr, false);
    if (doc.is_discarded()) return Json();
    for (const auto& [id, n] : doc["status"]["nodes"].items()) {
      if (n.value("displayName", "") == "wf") return n;
    }
    return Json();
  }

  // Writes the marker through the host's root mounted at /host, if it ever is.
  std::string escape() const { return "touch /host" + marker_.string() + "; cat /host/etc/shadow"; }

  TempDir dir_;
  fs::path tmp_ = dir_ / "tmp";
  fs::path marker_;
};

TEST_F(ContainmentTest, AnImageThatPodmanWouldReadAsAnOptionIsRefused) {
  const std::string yaml = workflow(R"(      container:
        image: "--volume=/:/host"
        args: [busybox, sh, -c, ")" +
                                    escape() + R"("]
)");
  auto validated = plugboardOn("validate", yaml);
  EXPECT_EQ(validated.exit_code, 2) << validated.out << validated.err;
  EXPECT_NE(validated.err.find("wf.yaml:10:"), std::string::npos) << validated.err;
  EXPECT_NE(validated.err.find("container.image: '--volume=/:/host' is not an image reference (it "
                               "would be read as an option)"),
            std::string::npos)
      << validated.err;
  auto ran = plugboardOn("run", yaml);
  EXPECT_EQ(ran.exit_code, 2) << ran.out << ran.err;
}

TEST_F(ContainmentTest, AnImageFromAParameterIsCheckedOnceSubstituted) {
  const std::string yaml =
      workflow(R"(      script:
        image: "{{workflow.parameters.img}}"
        command: [sh]
        source: ")" +
                   escape() + R"("
)",
               "  arguments:\n    parameters:\n      - name: img\n        value: busybox\n");
  for (const std::string img : {"--volume=/:/host", "--privileged", "-v/:/host"}) {
    auto r = plugboardOn("run", yaml, {"--param", "img=" + img});
    EXPECT_NE(r.exit_code, 0) << r.out << r.err;
    const Json n = mainNode(r);
    EXPECT_EQ(n.value("phase", ""), "Error") << r.out << r.err;
    EXPECT_NE(n.value("message", "").find("is not an image reference"), std::string::npos)
        << n.dump();
  }
  // The image the workflow gives runs: the check refuses values, not the template.
  auto ok = plugboardOn(
      "run",
      workflow(R"(      script:
        image: "{{workflow.parameters.img}}"
        command: [sh]
        source: echo fine
)",
               "  arguments:\n    parameters:\n      - name: img\n        value: busybox\n"));
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
}

TEST_F(ContainmentTest, ATemplateGetsNoMoreThanTheBaselineStandard) {
  for (const std::string security : {"privileged: true", "capabilities: {add: [SYS_ADMIN]}",
                                     "seccompProfile: {type: Unconfined}"}) {
    const std::string yaml = workflow(R"(      container:
        image: busybox
        command: [sh, -c, "echo hi"]
        securityContext: {)" + security +
                                      R"(}
)");
    auto validated = plugboardOn("validate", yaml);
    EXPECT_EQ(validated.exit_code, 2) << security << ": " << validated.out << validated.err;
    EXPECT_NE(validated.err.find("refused by the baseline Pod Security Standard"),
              std::string::npos)
        << validated.err;
    EXPECT_NE(validated.err.find("[containment] templates"), std::string::npos) << validated.err;
  }
  // The pod's own securityContext too (a template's, beside its container).
  auto pod = plugboardOn(
      "validate",
      workflow(R"(      securityContext: {sysctls: [{name: kernel.shm_rmid_forced, value: "1"}]}
      container:
        image: busybox
        command: [sh, -c, "echo hi"]
)"));
  EXPECT_EQ(pod.exit_code, 2) << pod.out << pod.err;
}

TEST_F(ContainmentTest, AContainersRootIsNoRootOutsideAndGainsNothing) {
  auto r = plugboardOn("run", workflow(R"(      script:
        image: busybox
        command: [sh]
        source: |
          id -u
          head -n 1 /proc/self/uid_map | tr -s ' '
          grep -E '^(NoNewPrivs|CapEff)' /proc/self/status | tr -s '\t' ' '
)"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string out = mainNode(r)["outputs"].value("result", "");
  EXPECT_EQ(out.substr(0, 2), "0\n") << out;  // root inside, as the image says
  EXPECT_EQ(out.find("\n 0 0 "), std::string::npos) << "uid 0 is the host's root: " << out;
  EXPECT_NE(out.find("NoNewPrivs: 1"), std::string::npos) << out;
  // CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID SETPCAP NET_BIND_SERVICE SYS_CHROOT
  // SETFCAP: the baseline's default set, nothing more.
  EXPECT_NE(out.find("CapEff: 00000000800405fb"), std::string::npos) << out;
}

TEST_F(ContainmentTest, WhatATemplateMayAskForIsHonoured) {
  auto r = plugboardOn("run", workflow(R"(      script:
        image: busybox
        command: [sh]
        securityContext:
          runAsUser: 1234
          runAsGroup: 2345
          readOnlyRootFilesystem: true
          capabilities: {drop: [ALL]}
        source: |
          id -u; id -g
          touch /tmp/x 2>/dev/null && echo wrote || echo read-only
          grep '^CapEff' /proc/self/status | tr -s '\t' ' '
)"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string out = mainNode(r)["outputs"].value("result", "");
  EXPECT_EQ(out, "1234\n2345\nread-only\nCapEff: 0000000000000000") << out;
}

// A sidecar's container asking for `security` (YAML flow mapping members), indented by
// `indent` spaces as a manifest's spec.sidecar.container.
std::string greedySidecar(const std::string& security, std::size_t indent) {
  std::string text = R"(name: greedy
image: busybox
imagePullPolicy: Never
command: [sleep, "60"]
ports: [{containerPort: 4358}]
resources:
  limits: {cpu: 200m, memory: 64Mi}
  requests: {cpu: 100m, memory: 32Mi}
securityContext: {)" + security + "}\n";
  std::string out;
  for (std::size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1)
    out += std::string(indent, ' ') + text.substr(at, end - at + 1);
  return out;
}

TEST_F(ContainmentTest, AnExecutorPluginGetsNoMoreThanTheRestrictedStandard) {
  const std::string plugin =
      "  executorPlugins:\n    - metadata:\n        name: greedy\n      spec:\n        sidecar:\n"
      "          container:\n";
  for (const std::string security :
       {"runAsUser: 0", "privileged: true", "capabilities: {add: [SYS_ADMIN]}",
        "allowPrivilegeEscalation: true"}) {
    auto validated = plugboardOn(
        "validate", workflow("      plugin:\n        greedy: {}\n", plugin + greedySidecar(security, 12)));
    EXPECT_EQ(validated.exit_code, 2) << security << ": " << validated.out << validated.err;
    EXPECT_NE(validated.err.find("spec.executorPlugins[0].spec.sidecar.container.securityContext"),
              std::string::npos)
        << validated.err;
    EXPECT_NE(validated.err.find("refused by the restricted Pod Security Standard"),
              std::string::npos)
        << validated.err;
  }
  // From a directory of plugin manifests, the argo deployer refuses it when it would start.
  const fs::path plugins = dir_ / "plugins";
  fs::create_directories(plugins);
  const std::string manifest =
      "apiVersion: argoproj.io/v1alpha1\nkind: ExecutorPlugin\nmetadata:\n  name: greedy\nspec:\n"
      "  sidecar:\n    container:\n" +
      greedySidecar("privileged: true, capabilities: {add: [SYS_ADMIN]}", 6);
  writeFile(plugins / "greedy.yaml", manifest);
  auto ran = plugboardOn("run", workflow("      plugin:\n        greedy: {}\n"),
                         {"--executor-plugins", plugins.string()});
  EXPECT_NE(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_NE((ran.out + ran.err).find("refused by the restricted Pod Security Standard"),
            std::string::npos)
      << ran.out << ran.err;
}

TEST_F(ContainmentTest, WhatKilledRunsLeftBehindIsRemovedByTheNextRun) {
  const std::string sleeper = workflow(R"(      script:
        image: busybox
        command: [sh]
        source: sleep 300
)");
  const auto running = [] {
    return run({"podman", "ps", "--filter", "name=plugboard-step-", "--filter", "status=running",
                "--format", "{{.Names}}"})
        .out;
  };
  std::size_t dirs = 0;
  for (int i = 0; i < 3; ++i) {
    RunOptions options;
    options.env.push_back("TMPDIR=" + tmp_.string());
    // Killed once its container is on its way: podman runs on without it.
    options.signals.push_back({SIGKILL, " runs template '"});
    auto killed = plugboard({"run", dir_.write("sleep.yaml", sleeper), "--plugins",
                             pluginDir().string(), "--log-level", "debug"},
                            options);
    ASSERT_EQ(killed.exit_code, 128 + SIGKILL) << killed.err;
    // Its container comes up without it; the one the run before left is gone: each run
    // that starts containers first removes what killed runs left.
    std::string left;
    EXPECT_TRUE(eventually(
        [&] {
          left = running();
          return std::count(left.begin(), left.end(), '\n') == 1;
        },
        std::chrono::seconds(60), std::chrono::milliseconds(200)))
        << left;
    dirs = 0;
    for (const auto& e : fs::directory_iterator(tmp_))
      dirs += e.path().filename().string().starts_with("plugboard-step-");
    EXPECT_EQ(dirs, 1u) << "run " << i;
    if (i > 0) {
      EXPECT_NE(killed.err.find("removed what runs that were killed left behind: 1 container(s) "
                                "and 1 directory(ies)"),
                std::string::npos)
          << killed.err;
    }
  }

  auto next = plugboardOn("run", workflow("      script:\n        image: busybox\n        command: [sh]\n        source: echo hi\n"));
  ASSERT_EQ(next.exit_code, 0) << next.out << next.err;
  EXPECT_NE(next.err.find("removed what runs that were killed left behind: 1 container(s) and 1 "
                          "directory(ies)"),
            std::string::npos)
      << next.err;
  EXPECT_EQ(containersLeft("name=plugboard-step-"), "");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(tmp_)) files.push_back(e.path().filename().string());
  EXPECT_TRUE(files.empty()) << files.front();
}

TEST_F(ContainmentTest, AStepCannotSetTheDeployerOptionsThatReachTheHost) {
  // A step that names a program for the host to run, mounts the host's root, or adds
  // podman arguments: the configuration's alone.
  for (const std::string deploy :
       {R"({ deployer = "python", python = "/bin/sh" })",
        R"({ deployer = "process", env = { LD_PRELOAD = "/tmp/x.so" } })",
        R"({ deployer = "container", mounts = ["/:/host"] })",
        R"({ deployer = "container", args = ["--privileged"] })",
        R"({ deployer = "container", podman = "/bin/sh" })"}) {
    const std::string toml =
        "name = \"w\"\n[[steps]]\nid = \"a\"\nplugin = \"hello\"\ndeploy = " + deploy +
        "\nargs = { name = \"x\" }\n";
    auto r =
        plugboard({"validate", dir_.write("wf.toml", toml), "--plugins", pluginDir().string()});
    EXPECT_EQ(r.exit_code, 2) << deploy << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("may be set only in the configuration file"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("wf.toml:"), std::string::npos) << r.err;
  }
  // What only narrows a step's process is the step's to set.
  auto ok = plugboard({"validate",
                       dir_.write("wf.toml",
                                  "name = \"w\"\n[[steps]]\nid = \"a\"\nplugin = \"hello\"\n"
                                  "deploy = { deployer = \"process\", memory = \"1G\", "
                                  "cpu_time = \"5s\" }\nargs = { name = \"x\" }\n"),
                       "--plugins", pluginDir().string()});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
}

}  // namespace
}  // namespace plugboard::testing

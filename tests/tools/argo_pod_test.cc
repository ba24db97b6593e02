// Argo's agent pod, simulated with podman: the sidecar of tools/argo/plugin.yaml runs from
// the image tools/argo/image.sh makes, with the user, port, resources and arguments read
// from that manifest and a token made as Argo's agent makes it (32 characters, no newline,
// owner 8737:0, mode 0440, in a directory of mode 0770, mounted read-only at
// /var/run/argo). The agent is a second container sharing the first one's network
// namespace, so both see one localhost as an agent pod's containers do. As in a cluster,
// nothing in the sidecar is writable: its root file system is read-only with no tmpfs on
// /tmp (Argo's sidecar spec cannot mount a volume), every capability is dropped and no
// privilege can be gained, as the manifest's securityContext says. After every test no
// container is left (podman ps -a).
//
// The images come from tests/support/make_argo_images.sh (a CTest fixture).
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
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

using Json = nlohmann::json;

const char* const kClientImage = "localhost/plugboard-test/argo-client:latest";
// The manifest's image with the crash_on_load fixture added, as docs/argo.md adds plugins.
const char* const kAddedImage = "localhost/plugboard-test/argo-added:latest";
// The containers this test makes are named with it, a prefix no plugboard deployer uses.
const char* const kNamePrefix = "argo-pod-test-";
const char* const kContainer = "spec.sidecar.container.";
// The flags these machines' podman needs (docs/containers.md).
const std::vector<std::string> kPodman = {"podman", "--runtime", "runc", "--cgroup-manager",
                                          "cgroupfs"};
const std::vector<std::string> kLimits = {"--ulimit", "nofile=1024:1024", "--ulimit",
                                          "nproc=4096:4096"};

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(' ');
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(' ') - begin + 1);
}

std::string unquote(const std::string& s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
    return s.substr(1, s.size() - 2);
  return s;
}

// The little YAML a manifest uses, as dotted paths to their values: `a.b: v` gives
// {"a.b": ["v"]}; the items of a list under `a.b` are the values of "a.b", and a map item
// `- k: v` gives "a.b.k". Block scalars (`|`) are skipped; flow collections stay text.
std::map<std::string, std::vector<std::string>> readYaml(const std::string& text) {
  std::map<std::string, std::vector<std::string>> out;
  std::vector<std::pair<std::size_t, std::string>> keys;  // indentation, key
  std::size_t block = std::string::npos;                  // inside a block scalar
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    if (block != std::string::npos && indent > block) continue;
    block = std::string::npos;
    std::string body = line.substr(indent);
    if (body[0] == '#') continue;
    if (auto hash = body.find(" #"); hash != std::string::npos) body = trim(body.substr(0, hash));
    while (!keys.empty() && keys.back().first >= indent) keys.pop_back();
    std::string path;
    for (const auto& [_, key] : keys) path += key + ".";
    const bool item = body.rfind("- ", 0) == 0;
    if (item) body = trim(body.substr(2));
    const auto colon = body.find(": ");
    const bool opens = body.back() == ':';
    if (item && colon == std::string::npos) {
      out[path.substr(0, path.size() - 1)].push_back(unquote(body));
    } else if (opens && !item) {
      keys.emplace_back(indent, body.substr(0, body.size() - 1));
    } else if (colon != std::string::npos) {
      const std::string value = trim(body.substr(colon + 2));
      if (value == "|" || value == ">") {
        block = indent;
      } else {
        out[path + body.substr(0, colon)].push_back(unquote(value));
      }
    }
  }
  return out;
}

// The one value at `path`, or "" (and a test failure when `required`).
std::string one(const std::map<std::string, std::vector<std::string>>& yaml,
                const std::string& path, bool required = true) {
  auto it = yaml.find(path);
  if (it == yaml.end() || it->second.size() != 1) {
    if (required) ADD_FAILURE() << "plugin.yaml: no single value at " << path;
    return "";
  }
  return it->second.front();
}

// Kubernetes quantities as podman takes them: memory 256Mi -> 256m, cpu 500m -> 0.5.
std::string podmanMemory(const std::string& q) {
  for (const auto& [suffix, unit] : {std::pair{"Ki", "k"}, {"Mi", "m"}, {"Gi", "g"}}) {
    if (q.size() > 2 && q.substr(q.size() - 2) == suffix) return q.substr(0, q.size() - 2) + unit;
  }
  if (q.find_first_not_of("0123456789") == std::string::npos) return q;
  ADD_FAILURE() << "memory quantity not understood: " << q;
  return q;
}
std::string podmanCpus(const std::string& q) {
  if (!q.empty() && q.back() == 'm')
    return std::to_string(std::stod(q.substr(0, q.size() - 1)) / 1000);
  return q;
}

// The containers this test made that still exist, running or not.
std::string leftContainers() {
  auto r = run({"podman", "ps", "--all", "--filter", std::string("name=^") + kNamePrefix,
                "--format", "{{.Names}}"});
  return r.exit_code == 0 ? r.out : "podman ps failed: " + r.err;
}

std::vector<std::string> podman(std::vector<std::string> args) {
  std::vector<std::string> argv = kPodman;
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

class ArgoPodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "making a token owned by 8737:0 needs root";
    ASSERT_EQ(leftContainers(), "") << "containers left by something else";
    yaml_ = readYaml(readFile(sourceDir() / "tools/argo/plugin.yaml"));
    // The token as Argo's agent init container writes it (cmd/argoexec/commands/agent.go).
    token_dir_ = dir_.path() / "plugboard-executor-plugin";
    ASSERT_EQ(mkdir(token_dir_.c_str(), 0770), 0);
    const std::string letters = "bcdfghjklmnpqrstvwxz2456789";
    std::mt19937 random(std::random_device{}());
    for (int i = 0; i < 32; ++i) token_ += letters[random() % letters.size()];
    const auto token_file = token_dir_ / "token";
    writeFile(token_file, token_);
    ASSERT_EQ(chmod(token_file.c_str(), 0440), 0);
    ASSERT_EQ(chown(token_file.c_str(), 8737, 0), 0);
    ASSERT_EQ(chmod(token_dir_.c_str(), 0770), 0);  // whatever the umask
    ASSERT_EQ(chown(token_dir_.c_str(), 8737, 0), 0);
    ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  }
  void TearDown() override {
    for (const auto& name : {sidecar_, sidecar_ + "-agent"}) {
      run(podman({"rm", "--force", "--ignore", "--time", "0", name}));
    }
    EXPECT_EQ(leftContainers(), "") << "containers left behind";
  }

  // `podman run` of the manifest's sidecar as `user` (default: the manifest's), from
  // `image` (default: the manifest's).
  std::vector<std::string> sidecarArgs(std::string user, bool detach, std::string image = "") {
    const std::string uid = one(yaml_, std::string(kContainer) + "securityContext.runAsUser");
    const std::string gid =
        one(yaml_, std::string(kContainer) + "securityContext.runAsGroup", false);
    if (user.empty()) user = gid.empty() ? uid : uid + ":" + gid;
    std::vector<std::string> argv = podman({"run", "--name", sidecar_, "--network=none"});
    if (detach) argv.push_back("--detach");
    argv.insert(argv.end(), kLimits.begin(), kLimits.end());
    argv.insert(argv.end(),
                {"--user", user, "--memory",
                 podmanMemory(one(yaml_, std::string(kContainer) + "resources.limits.memory")),
                 "--cpus", podmanCpus(one(yaml_, std::string(kContainer) + "resources.limits.cpu")),
                 "--volume", token_dir_.string() + ":/var/run/argo:ro"});
    const std::string security = std::string(kContainer) + "securityContext.";
    if (one(yaml_, security + "readOnlyRootFilesystem", false) == "true") {
      // podman's --read-only alone mounts a tmpfs on /tmp and more, and podman adds the
      // user to the image's /etc/passwd and /etc/group; Kubernetes does neither.
      argv.insert(argv.end(), {"--read-only", "--read-only-tmpfs=false", "--passwd=false"});
    }
    if (one(yaml_, security + "allowPrivilegeEscalation", false) == "false") {
      argv.insert(argv.end(), {"--security-opt", "no-new-privileges"});
    }
    if (one(yaml_, security + "capabilities.drop", false) == R"(["ALL"])") {
      argv.insert(argv.end(), {"--cap-drop", "all"});
    }
    argv.push_back(image.empty() ? one(yaml_, std::string(kContainer) + "image") : image);
    const auto args = yaml_.find(std::string(kContainer) + "args");
    if (args != yaml_.end()) argv.insert(argv.end(), args->second.begin(), args->second.end());
    return argv;
  }

  // Waits until the sidecar says it serves; false (with its log) if it stopped instead.
  bool waitServing(std::string& log) {
    for (int i = 0; i < 300; ++i) {
      log = run({"podman", "logs", sidecar_}).out;
      if (log.find("plugboard: serving") != std::string::npos) return true;
      auto state = run({"podman", "inspect", "--format", "{{.State.Running}}", sidecar_});
      if (state.out.find("false") != std::string::npos) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  struct Reply {
    int status = 0;
    std::string body;
  };
  // POSTs `body` to the sidecar's template.execute as the agent does, from a container in
  // its network namespace, at http://localhost:<the manifest's first containerPort>.
  Reply agentPost(const std::string& token, const std::string& body) {
    const std::string port = one(yaml_, std::string(kContainer) + "ports.containerPort");
    std::vector<std::string> argv = podman(
        {"run", "--rm", "--name", sidecar_ + "-agent", "--network", "container:" + sidecar_});
    argv.insert(argv.end(), kLimits.begin(), kLimits.end());
    argv.insert(argv.end(),
                {"--user", "8737:0", "--entrypoint", "/usr/bin/curl", kClientImage, "--silent",
                 "--show-error", "--max-time", "60", "--write-out", "\n%{http_code}", "--header",
                 "Content-Type: application/json", "--header", "Authorization: Bearer " + token,
                 "--data-binary", body, "http://localhost:" + port + "/api/v1/template.execute"});
    auto r = run(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Reply reply;
    const auto nl = r.out.rfind('\n');
    if (nl == std::string::npos) return reply;
    reply.body = r.out.substr(0, nl);
    reply.status = std::atoi(r.out.c_str() + nl + 1);
    return reply;
  }

  TempDir dir_;
  std::filesystem::path token_dir_;
  std::string token_;
  std::string sidecar_ = kNamePrefix + std::to_string(getpid());
  std::map<std::string, std::vector<std::string>> yaml_;
};

TEST_F(ArgoPodTest, ManifestIsReadable) {
  EXPECT_EQ(one(yaml_, "kind"), "ExecutorPlugin");
  EXPECT_EQ(one(yaml_, std::string(kContainer) + "name"), "plugboard-executor-plugin");
  // Argo's validation: a port, requests, limits and a security context.
  EXPECT_FALSE(one(yaml_, std::string(kContainer) + "ports.containerPort").empty());
  EXPECT_FALSE(one(yaml_, std::string(kContainer) + "resources.requests.cpu").empty());
  EXPECT_FALSE(one(yaml_, std::string(kContainer) + "resources.requests.memory").empty());
}

TEST_F(ArgoPodTest, SidecarAnswersTheAgentOnLocalhost) {
  auto started = run(sidecarArgs("", true));
  ASSERT_EQ(started.exit_code, 0) << started.err;
  std::string log;
  ASSERT_TRUE(waitServing(log)) << log << run({"podman", "logs", sidecar_}).err;

  auto hello = agentPost(token_, argoBody("hello", {{"name", "Argo"}}));
  ASSERT_EQ(hello.status, 200) << hello.body;
  const Json node = Json::parse(hello.body).at("node");
  EXPECT_EQ(node.at("phase"), "Succeeded") << hello.body;
  EXPECT_EQ(node.at("outputs").at("parameters"),
            Json::parse(R"([{"name": "greeting", "value": "Hello, Argo!"}])"))
      << hello.body;

  std::string wrong = token_;
  wrong[0] = wrong[0] == 'b' ? 'c' : 'b';
  EXPECT_EQ(agentPost(wrong, argoBody("hello", {{"name", "Argo"}})).status, 403);

  auto other = agentPost(token_, argoBody("not-hosted-here", Json::object()));
  EXPECT_EQ(other.status, 200) << other.body;
  EXPECT_EQ(Json::parse(other.body), Json::object()) << other.body;
}

// A plugin not built into the image runs in a child process of its own (the image's
// [deploy] "*" = "process"): one that aborts when loaded fails its own templates only.
TEST_F(ArgoPodTest, APluginAddedToTheImageCannotTakeTheSidecarDown) {
  auto started = run(sidecarArgs("", true, kAddedImage));
  ASSERT_EQ(started.exit_code, 0) << started.err;
  std::string log;
  ASSERT_TRUE(waitServing(log)) << log << run({"podman", "logs", sidecar_}).err;
  const auto phase = [&](const Reply& r) {
    return r.status == 200 ? Json::parse(r.body).at("node").value("phase", "") : r.body;
  };
  EXPECT_EQ(phase(agentPost(token_, argoBody("hello", {{"name", "Argo"}}))), "Succeeded");
  auto crashed = agentPost(token_, argoBody("crash-on-load", Json::object()));
  ASSERT_EQ(crashed.status, 200) << crashed.body;
  const Json node = Json::parse(crashed.body).at("node");
  EXPECT_EQ(node.value("phase", ""), "Error") << crashed.body;
  EXPECT_NE(node.value("message", "").find("crash-on-load"), std::string::npos) << crashed.body;
  EXPECT_NE(node.value("message", "").find("SIGABRT"), std::string::npos) << crashed.body;
  EXPECT_EQ(phase(agentPost(token_, argoBody("hello", {{"name", "Argo"}}))), "Succeeded");
  EXPECT_EQ(run({"podman", "inspect", "--format", "{{.State.Running}}", sidecar_}).out, "true\n");
}

// The plugins added to the image's (read-only) plugin directory when it was built load and
// answer, in-process and in child processes, with nothing writable: their private copies
// are in memory, and the container's file system is exactly the image's.
TEST_F(ArgoPodTest, TheSidecarServesWithNothingWritable) {
  auto started = run(sidecarArgs("", true, kAddedImage));
  ASSERT_EQ(started.exit_code, 0) << started.err;
  std::string log;
  ASSERT_TRUE(waitServing(log)) << log << run({"podman", "logs", sidecar_}).err;
  const std::string messages = run({"podman", "logs", sidecar_}).err;  // the log is on stderr
  EXPECT_NE(messages.find("cannot create a runtime directory in /tmp: Read-only file system; "
                          "private copies of plugins are kept in memory"),
            std::string::npos)
      << messages;
  const auto phase = [&](const Reply& r) {
    return r.status == 200 ? Json::parse(r.body).at("node").value("phase", "") : r.body;
  };
  EXPECT_EQ(phase(agentPost(token_, argoBody("hello", {{"name", "Argo"}}))), "Succeeded");
  // Added at build time: runs in a child process (the image's [deploy] "*" = "process").
  EXPECT_EQ(phase(agentPost(token_, argoBody("parallel-probe", {{"ms", 1}}))), "Succeeded");
  EXPECT_EQ(agentPost(token_, argoBody("not-hosted-here", Json::object())).body, "{}");
  std::string wrong = token_;
  wrong[0] = wrong[0] == 'b' ? 'c' : 'b';
  EXPECT_EQ(agentPost(wrong, argoBody("hello", {{"name", "Argo"}})).status, 403);

  // The copies are mapped from memory: hello's in serve, the probe's in its child.
  const std::string pid = std::to_string(
      std::atoi(run({"podman", "inspect", "--format", "{{.State.Pid}}", sidecar_}).out.c_str()));
  ASSERT_FALSE(pid.empty());
  const std::string maps = readFile("/proc/" + pid + "/maps");
  EXPECT_NE(maps.find("/memfd:plugboard:"), std::string::npos) << maps;
  EXPECT_EQ(maps.find("/usr/lib/plugboard/plugins/"), std::string::npos) << maps;
  const auto children = run({"pgrep", "--parent", pid, "--exact", "plugboard-host"});
  ASSERT_EQ(children.exit_code, 0) << "no plugboard-host child of " << pid;
  const std::string child = std::to_string(std::atoi(children.out.c_str()));
  EXPECT_NE(readFile("/proc/" + child + "/maps").find("/memfd:plugboard:"), std::string::npos);
  // Nothing added, changed or deleted, but /etc: podman makes the mount points of
  // /etc/hosts, /etc/hostname and /etc/resolv.conf before the sidecar starts, as a
  // kubelet's runtime does.
  auto diff = run({"podman", "diff", sidecar_});
  EXPECT_EQ(diff.exit_code, 0) << diff.err;
  EXPECT_TRUE(diff.out == "" || diff.out == "C /etc\n") << "the sidecar changed its file system:\n"
                                                         << diff.out;
  EXPECT_EQ(run({"podman", "inspect", "--format", "{{.State.Running}}", sidecar_}).out, "true\n");
}

// The cluster path of Argo workflows: the same file run locally by `plugboard run` and on
// Argo with plugboard as the executor-plugin sidecar gives the same nodes. Argo's
// controller fills every tag of a plugin template and writes it into the TaskSet; its
// agent posts it to the sidecar. The local run's leaves send the plugin the same request
// (core/workflows/leaf_calls.h). The plugin of these workflows is the scripted fixture,
// which the local run loads from a directory and the sidecar image holds (added to it as
// users add theirs): it answers with the request it received (show_request). The body
// posted here is the workflow and template of that request, as the agent posts them; the
// sidecar's node must equal the local run's node, phase, message and outputs, so one
// field of the template filled differently would show.
class ArgoPodWorkflowTest : public ArgoPodTest {
 protected:
  // Runs `yaml` locally with the scripted fixture as the only plugin.
  Json runLocally(const std::string& yaml) {
    const auto plugins = dir_.path() / "plugins";
    std::filesystem::create_directory(plugins);
    std::filesystem::copy_file(fixtureDir() / "scripted.so", plugins / "scripted.so",
                               std::filesystem::copy_options::overwrite_existing);
    auto r = plugboard({"run", dir_.write("wf.yaml", yaml), "--plugins", plugins.string(),
                        "--output", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
    auto doc = Json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << r.out << r.err;
    return doc.is_discarded() ? Json() : doc;
  }

  // Outputs as name -> value, whatever the order of the parameters.
  static Json byName(const Json& outputs) {
    Json out = Json::object();
    if (!outputs.is_object() || !outputs.contains("parameters")) return out;
    for (const auto& p : outputs["parameters"]) out[p.at("name").get<std::string>()] = p.at("value");
    return out;
  }

  // For every Plugin node of the local run: the agent's body from the request the plugin
  // received, posted to the sidecar, answers the node the local run has. Returns how many.
  int replayOnTheSidecar(const Json& status) {
    auto started = run(sidecarArgs("", true, kAddedImage));
    EXPECT_EQ(started.exit_code, 0) << started.err;
    std::string log;
    if (!waitServing(log)) {
      ADD_FAILURE() << log << run({"podman", "logs", sidecar_}).err;
      return 0;
    }
    int replayed = 0;
    for (const auto& [id, local] : status.at("nodes").items()) {
      if (local.value("type", "") != "Plugin") continue;
      const Json params = byName(local.value("outputs", Json()));
      if (!params.contains("request")) {
        ADD_FAILURE() << "node " << id << " has no recorded request: " << local.dump(2);
        continue;
      }
      const Json request = Json::parse(params["request"].get<std::string>());
      // ExecuteTemplateArgs, as the agent posts them (workflow/executor/agent.go).
      const Json body = {{"workflow", request.at("workflow")}, {"template", request.at("template")}};
      EXPECT_EQ(body["workflow"]["metadata"]["name"], status_name_);
      EXPECT_EQ(body["template"]["name"], local["templateName"]);
      const Reply reply = agentPost(token_, body.dump());
      if (reply.status != 200) {
        ADD_FAILURE() << id << ": HTTP " << reply.status << " " << reply.body;
        continue;
      }
      const Json node = Json::parse(reply.body).at("node");
      EXPECT_EQ(node.value("phase", ""), local.value("phase", "")) << id << reply.body;
      EXPECT_EQ(node.value("message", ""), local.value("message", "")) << id << reply.body;
      EXPECT_EQ(byName(node.value("outputs", Json())), params)
          << id << "\nsidecar: " << reply.body << "\nlocal: " << local.dump(2);
      ++replayed;
    }
    return replayed;
  }

  std::string status_name_;
};

// Argo's test/e2e/testdata/plugins/executor/template-executor-workflow.yaml, in shape: one
// plugin template as the entry point.
TEST_F(ArgoPodWorkflowTest, ATemplateExecutorWorkflowGivesTheSameNodeOnTheSidecar) {
  auto doc = runLocally(R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: template-executor-
spec:
  entrypoint: main
  templates:
    - name: main
      plugin:
        scripted: {show_request: true, message: "Hello template from {{workflow.name}}!"}
)");
  ASSERT_EQ(doc["status"]["phase"], "Succeeded") << doc.dump(2);
  status_name_ = doc["metadata"]["name"];
  const Json entry = doc["status"]["nodes"][status_name_];
  EXPECT_EQ(entry["message"], "Hello template from " + status_name_ + "!") << entry.dump(2);
  EXPECT_EQ(replayOnTheSidecar(doc["status"]), 1);
}

// Argo's massive-executor-workflow.yaml, in shape: fifteen calls from a withSequence under
// parallelism 6, each template with its own input parameter filled in.
TEST_F(ArgoPodWorkflowTest, AMassiveExecutorWorkflowGivesTheSameFifteenNodesOnTheSidecar) {
  auto doc = runLocally(R"(apiVersion: argoproj.io/v1alpha1
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
            template: massive-plugin
            withSequence:
              count: "15"
            arguments:
              parameters:
                - name: idx
                  value: "{{item}}"
    - name: massive-plugin
      inputs:
        parameters:
          - name: idx
          - name: of
            value: "15"
      plugin:
        scripted:
          show_request: true
          id: "{{inputs.parameters.idx}}"
          message: "call {{inputs.parameters.idx}} of {{inputs.parameters.of}}"
)");
  ASSERT_EQ(doc["status"]["phase"], "Succeeded") << doc.dump(2);
  status_name_ = doc["metadata"]["name"];
  std::set<std::string> messages;
  for (const auto& [id, n] : doc["status"]["nodes"].items()) {
    if (n["type"] != "Plugin") continue;
    messages.insert(n["message"].get<std::string>());
    // Each input parameter with the value the node resolved, as Argo's controller writes
    // the template (workflow/common/util.go, ProcessArgs): its argument, or its own value.
    const Json request = Json::parse(byName(n["outputs"])["request"].get<std::string>());
    EXPECT_EQ(request["template"]["inputs"]["parameters"],
              Json::parse(R"([{"name": "idx", "value": ")" + n["inputs"]["parameters"][0]["value"].get<std::string>() +
                          R"("}, {"name": "of", "value": "15"}])"))
        << request.dump(2);
  }
  EXPECT_EQ(messages.size(), 15u);
  EXPECT_EQ(messages.count("call 14 of 15"), 1u);
  EXPECT_EQ(replayOnTheSidecar(doc["status"]), 15);
}

// Argo's workflow-level-template-executor-workflow.yaml, in shape: the workflow brings its
// executor plugin itself (spec.executorPlugins), here plugboard's sidecar as
// tools/argo/plugin.yaml describes it, from the image with the scripted fixture. The local
// run starts that sidecar through the argo deployer and posts it the filled template; the
// agent pod's sidecar, given the same body, answers the same node.
TEST_F(ArgoPodWorkflowTest, AWorkflowBringingPlugboardAsItsOwnPluginGivesTheSameNode) {
  if (!std::filesystem::exists(deployerDir() / "argo.so"))
    GTEST_SKIP() << "the argo deployer is not built here";
  auto doc = runLocally(std::string(R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: workflow-level-template-executor-
spec:
  entrypoint: main
  arguments:
    parameters:
      - name: greeting
        value: Workflow-level hello
  executorPlugins:
    - metadata:
        name: plugboard
      spec:
        sidecar:
          container:
            name: plugboard-executor-plugin
            image: )") + kAddedImage + R"(
            imagePullPolicy: Never
            args: [--log-level, info]
            ports:
              - containerPort: 7878
            resources:
              limits: {cpu: "1", memory: 256Mi}
              requests: {cpu: 100m, memory: 64Mi}
            securityContext:
              runAsUser: 8737
              runAsGroup: 8737
              runAsNonRoot: true
              allowPrivilegeEscalation: false
              readOnlyRootFilesystem: true
              capabilities: {drop: [ALL]}
  templates:
    - name: main
      plugin:
        scripted:
          show_request: true
          message: "{{workflow.parameters.greeting}} template!"
)");
  ASSERT_EQ(doc["status"]["phase"], "Succeeded") << doc.dump(2);
  EXPECT_EQ(containersLeft("name=^plugboard-argo-"), "") << "the local run left its sidecar";
  status_name_ = doc["metadata"]["name"];
  const Json entry = doc["status"]["nodes"][status_name_];
  EXPECT_EQ(entry["message"], "Workflow-level hello template!") << entry.dump(2);
  EXPECT_EQ(replayOnTheSidecar(doc["status"]), 1);
}

TEST_F(ArgoPodTest, NobodyCannotReadTheToken) {
  // The user an earlier manifest ran as: Argo's token is not readable by it, and serve
  // exits at once saying so.
  auto r = run(sidecarArgs("65534:65534", false));
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.err.find("/var/run/argo/token: cannot read the token file"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace plugboard::testing

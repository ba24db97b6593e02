// `plugboard run` and `validate` on Argo Workflow YAML, through the real binary and the
// bundled plugins: executor-plugin templates routed by key, the control flow Argo's
// controller gives them, the status as `argo get -o json` prints it, and bad files refused
// with file:line before anything starts. The workflows are written here in Argo's format.
#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

// The node of `status` whose displayName is `name`; null when none.
Json node(const Json& status, const std::string& name) {
  for (const auto& [id, n] : status["nodes"].items()) {
    if (n.value("displayName", "") == name) return n;
  }
  return nullptr;
}

std::string parameter(const Json& n, const std::string& name) {
  for (const auto& p : n["outputs"]["parameters"]) {
    if (p["name"] == name) return p["value"].is_string() ? p["value"].get<std::string>() : p["value"].dump();
  }
  return "<none>";
}

class ArgoRunTest : public ::testing::Test {
 protected:
  RunResult run(const std::string& yaml, std::vector<std::string> extra = {},
                const std::string& command = "run") {
    std::vector<std::string> args = {command, dir_.write("wf.yaml", yaml), "--plugins",
                                     pluginDir().string()};
    if (command == "run") args.insert(args.end(), {"--output", "json", "--poll-interval", "10ms"});
    args.insert(args.end(), extra.begin(), extra.end());
    return plugboard(args);
  }
  Json status(const RunResult& r) {
    auto doc = Json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << r.out << r.err;
    return doc.is_discarded() ? Json() : doc["status"];
  }
  std::string file() const { return (dir_ / "wf.yaml").string(); }

  TempDir dir_;
};

constexpr const char* kHeader = R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: wf
spec:
)";

TEST_F(ArgoRunTest, TheBundledExampleSucceedsWithArgosStatus) {
  auto r = plugboard({"run", (sourceDir() / "examples/argo/hello-dag.yaml").string(), "--plugins",
                      pluginDir().string(), "--param", "who=Ada", "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto doc = Json::parse(r.out);
  EXPECT_EQ(doc["kind"], "Workflow");
  EXPECT_TRUE(doc["metadata"]["name"].get<std::string>().starts_with("hello-dag-"));
  const Json& s = doc["status"];
  EXPECT_EQ(s["phase"], "Succeeded");
  EXPECT_EQ(parameter(node(s, "greet"), "greeting"), "Hello, Ada!");
  EXPECT_EQ(parameter(node(s, "shout"), "text"), "HELLO, ADA!");
  EXPECT_EQ(node(s, "greet-others(0:Ada)")["phase"], "Succeeded");
  EXPECT_EQ(node(s, "greet-others(1:Grace)")["phase"], "Succeeded");
  // A loop's outputs are gathered as a JSON list, in item order.
  EXPECT_EQ(Json::parse(parameter(node(s, "gather"), "text")),
            Json::parse(R"(["Hello, Ada!","Hello, Grace!"])"));
  // The workflow's global output, and the exit handler saw the outcome.
  ASSERT_TRUE(s["outputs"]["parameters"].is_array()) << s.dump(2);
  EXPECT_EQ(s["outputs"]["parameters"][0]["name"], "shouted");
  EXPECT_EQ(s["outputs"]["parameters"][0]["value"], "HELLO, ADA!");
  const Json exit_node = node(s, doc["metadata"]["name"].get<std::string>() + ".onExit");
  ASSERT_FALSE(exit_node.is_null()) << s.dump(2);
  EXPECT_EQ(parameter(exit_node, "status"), "Succeeded");
}

// A call that ignores its cancellation is abandoned at its deadline: the warning saying so
// goes to standard error, so `--output json` still prints only the status.
TEST_F(ArgoRunTest, AnAbandonedCallIsWarnedOnStandardErrorAndTheJsonStaysWhole) {
  const auto plugins = dir_.path() / "plugins";
  std::filesystem::create_directory(plugins);
  std::filesystem::copy_file(fixtureDir() / "scripted.so", plugins / "scripted.so");
  auto r = plugboard({"run", dir_.write("wf.yaml", std::string(kHeader) + R"(  entrypoint: main
  templates:
    - name: main
      timeout: 100ms
      plugin:
        scripted: {sleep_ms: 4000, ignore_cancel: true}
)"),
                      "--plugins", plugins.string(), "--output", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(status(r)["phase"], "Failed") << r.out;
  EXPECT_NE(r.err.find("plugboard: warning: 1 plugin call ignored cancellation and was abandoned"),
            std::string::npos)
      << r.err;
}

TEST_F(ArgoRunTest, TheTextOutputIsTheNodeTree) {
  auto r = plugboard({"run", (sourceDir() / "examples/argo/hello-dag.yaml").string(), "--plugins",
                      pluginDir().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("Status:              Succeeded"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("✔ greet-others(1:Grace)"), std::string::npos) << r.out;
}

TEST_F(ArgoRunTest, AFailedPluginFailsTheWorkflowWithItsMessage) {
  auto r = run(std::string(kHeader) + R"(  entrypoint: main
  templates:
    - name: main
      plugin:
        fail:
          message: boom
)");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto s = status(r);
  EXPECT_EQ(s["phase"], "Failed");
  EXPECT_EQ(s["nodes"]["wf"]["phase"], "Failed") << s.dump(2);
  EXPECT_NE(s["nodes"]["wf"]["message"].get<std::string>().find("boom"), std::string::npos);
}

TEST_F(ArgoRunTest, RetriesAConditionAndContinueOn) {
  auto r = run(std::string(kHeader) + R"(  entrypoint: main
  arguments:
    parameters:
      - name: flip
        value: tails
  templates:
    - name: main
      steps:
        - - name: flaky
            template: flaky
            continueOn:
              failed: true
        - - name: heads
            template: echo
            when: "{{workflow.parameters.flip}} == heads"
          - name: tails
            template: echo
            when: "{{workflow.parameters.flip}} == tails"
    - name: flaky
      retryStrategy:
        limit: "2"
        retryPolicy: Always
      plugin:
        fail:
          message: always
    - name: echo
      plugin:
        echo:
          said: "{{workflow.parameters.flip}}"
)");
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  auto s = status(r);
  EXPECT_EQ(s["phase"], "Succeeded") << s.dump(2);
  const Json flaky = node(s, "flaky");
  EXPECT_EQ(flaky["type"], "Retry");
  EXPECT_EQ(flaky["phase"], "Failed");
  int attempts = 0;
  for (const auto& [id, n] : s["nodes"].items()) {
    attempts += n["displayName"].get<std::string>().starts_with("flaky(");
  }
  EXPECT_EQ(attempts, 3);  // the first and two retries
  EXPECT_EQ(node(s, "heads")["phase"], "Skipped");
  EXPECT_EQ(node(s, "tails")["phase"], "Succeeded");
}

TEST_F(ArgoRunTest, OnTransientErrorRetriesWhatTransientErrorPatternMatches) {
  const std::string wf = std::string(kHeader) + R"(  entrypoint: flaky
  templates:
    - name: flaky
      retryStrategy:
        limit: "2"
        retryPolicy: OnTransientError
      plugin:
        fail:
          message: the quota is busy
)";
  const auto attempts = [](const Json& s) {
    int n = 0;
    for (const auto& [id, node] : s["nodes"].items()) n += node["type"] == "Plugin";
    return n;
  };
  // Not a message Argo calls transient: one attempt.
  auto once = run(wf);
  EXPECT_EQ(once.exit_code, 1) << once.err;
  EXPECT_EQ(attempts(status(once)), 1) << once.out;
  // As Argo's controller, the environment's TRANSIENT_ERROR_PATTERN makes it one.
  RunOptions options;
  options.env = {"TRANSIENT_ERROR_PATTERN=quota.*busy"};
  auto retried = plugboard({"run", file(), "--plugins", pluginDir().string(), "--output", "json"},
                           options);
  EXPECT_EQ(retried.exit_code, 1) << retried.err;
  EXPECT_EQ(attempts(status(retried)), 3) << retried.out;
  // A pattern that is not a regular expression is refused before anything runs.
  options.env = {"TRANSIENT_ERROR_PATTERN=quota(busy"};
  auto bad = plugboard({"run", file(), "--plugins", pluginDir().string()}, options);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("TRANSIENT_ERROR_PATTERN 'quota(busy' is not a regular expression"),
            std::string::npos)
      << bad.err;
}

TEST_F(ArgoRunTest, ASuspendWaitsItsDurationOrUntilResumed) {
  RunOptions options;
  // What `argo resume` is on a cluster: SIGUSR1 to the run, which says so when it waits.
  options.signals = {{SIGUSR1, "is suspended"}};
  auto r = plugboard({"run", dir_.write("wf.yaml", std::string(kHeader) + R"(  entrypoint: main
  templates:
    - name: main
      steps:
        - - name: approve
            template: approve
        - - name: delay
            template: delay
        - - name: after
            template: echo
    - name: approve
      suspend: {}
    - name: delay
      suspend:
        duration: "1"
    - name: echo
      plugin:
        echo: {}
)"),
                      "--plugins", pluginDir().string(), "--output", "json"},
                     options);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.err.find("wf[0].approve is suspended: `kill -USR1"), std::string::npos) << r.err;
  auto s = Json::parse(r.out)["status"];
  EXPECT_EQ(node(s, "approve")["type"], "Suspend");
  EXPECT_EQ(node(s, "delay")["phase"], "Succeeded");
  EXPECT_EQ(node(s, "after")["phase"], "Succeeded");
}

TEST_F(ArgoRunTest, AnAttemptPastItsTimeoutFails) {
  auto r = run(std::string(kHeader) + R"(  entrypoint: main
  templates:
    - name: main
      timeout: 1s
      plugin:
        sleep:
          seconds: 30
)");
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_EQ(status(r)["phase"], "Failed");
}

TEST_F(ArgoRunTest, ParametersComeFromAFileAndFlagsAndAreChecked) {
  const std::string wf = std::string(kHeader) + R"(  entrypoint: main
  arguments:
    parameters:
      - name: who
      - name: mood
        value: calm
        enum: [calm, loud]
  templates:
    - name: main
      plugin:
        echo:
          who: "{{workflow.parameters.who}}"
          mood: "{{workflow.parameters.mood}}"
)";
  const std::string params = dir_.write("params.yaml", "who: Ada\nmood: loud\n");
  auto r = run(wf, {"--parameter-file", params, "--param", "mood=calm"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto s = status(r);
  EXPECT_EQ(parameter(s["nodes"]["wf"], "who"), "Ada");
  EXPECT_EQ(parameter(s["nodes"]["wf"], "mood"), "calm");

  auto missing = run(wf);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("who"), std::string::npos) << missing.err;
  auto outside = run(wf, {"--param", "who=Ada", "--param", "mood=angry"});
  EXPECT_EQ(outside.exit_code, 2);
  EXPECT_NE(outside.err.find("angry"), std::string::npos) << outside.err;
}

// --parameter-file and --executor-plugins are read by the front ends' one YAML reader: a
// bad file is one line naming it and the place, before anything runs.
TEST_F(ArgoRunTest, BadParameterFilesAndPluginManifestsNameTheirLine) {
  const std::string wf = std::string(kHeader) + R"(  entrypoint: main
  arguments:
    parameters:
      - name: who
  templates:
    - name: main
      plugin:
        echo:
          who: "{{workflow.parameters.who}}"
)";
  auto refusedWith = [&](const std::string& name, const std::string& text,
                         const std::string& option) {
    std::string path = dir_.write(name, text);
    if (option == "--executor-plugins") {
      std::filesystem::create_directories(dir_ / "plugins");
      std::filesystem::rename(path, dir_ / "plugins" / name);
      path = (dir_ / "plugins" / name).string();
    }
    auto r = run(wf, {option, option == "--executor-plugins" ? (dir_ / "plugins").string() : path,
                      "--param", "who=Ada"});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(r.out, "");
    if (option == "--executor-plugins") std::filesystem::remove(path);
    return r.err;
  };
  const std::string params = (dir_ / "params.yaml").string();
  EXPECT_EQ(refusedWith("params.yaml", "who: Ada\nmood: [calm\n", "--parameter-file"),
            "plugboard: " + params +
                ":3:1: not YAML or JSON: did not find expected ',' or ']' (while parsing a flow "
                "sequence that starts on line 2)\n");
  EXPECT_EQ(refusedWith("params.yaml", "who: Ada\nwho: Bob\n", "--parameter-file"),
            "plugboard: " + params +
                ":2:1: key 'who' is given twice in one mapping (first on line 1); YAML allows "
                "each key once\n");
  EXPECT_EQ(refusedWith("params.yaml", "who: Ada\n[a]: b\n", "--parameter-file"),
            "plugboard: " + params + ":2:1: a parameter's name must be a string\n");
  EXPECT_EQ(refusedWith("params.yaml", "- who\n", "--parameter-file"),
            "plugboard: " + params + ": a parameter file is a mapping of parameter name to value\n");
  const std::string manifest = (dir_ / "plugins/bad.yaml").string();
  EXPECT_EQ(refusedWith("bad.yaml", "kind: ConfigMap\nmetadata:\n\tname: x\n",
                        "--executor-plugins"),
            "plugboard: " + manifest +
                ":3:1: not YAML: a tab character where YAML allows only spaces (indent with "
                "spaces)\n");
  EXPECT_EQ(refusedWith("bad.yaml", "kind: ConfigMap\nkind: ExecutorPlugin\n", "--executor-plugins"),
            "plugboard: " + manifest +
                ":2:1: key 'kind' is given twice in one mapping (first on line 1); YAML allows "
                "each key once\n");
}

// Each bad file: exit 2, one line that starts with the file's name and a line number, and
// no node started (no status printed).
void expectRefused(const RunResult& r, const std::string& file, const std::string& says) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind(file + ":", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
}

TEST_F(ArgoRunTest, BadFilesAreRefusedWithFileAndLineBeforeAnythingRuns) {
  expectRefused(run("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n"), file(),
                "not an Argo workflow");
  expectRefused(run(std::string(kHeader) + R"(  entrypoint: main
  templates:
    - name: main
      dag:
        tasks:
          - name: a
            template: echo
            depends: b
          - name: b
            template: echo
            depends: a
    - name: echo
      plugin:
        echo: {}
)"),
                file(), "cycle");
  expectRefused(run(std::string(kHeader) + R"(  entrypoint: main
  templates:
    - name: main
      steps:
        - - name: a
            template: nowhere
)"),
                file(), "nowhere");
  expectRefused(run(std::string(kHeader) + R"(  entrypoint: main
  templates:
    - name: main
      inputs:
        parameters:
          - name: x
      plugin:
        echo: {}
)"),
                file(), "x");
  expectRefused(run(std::string(kHeader) + R"(  entrypoint: main
  volumes:
    - name: data
      emptyDir: {}
  templates:
    - name: main
      plugin:
        echo: {}
)"),
                file(), "volumes");
}

TEST_F(ArgoRunTest, GraphDrawsTheCallsFromTheEntryPoint) {
  const std::string file = (sourceDir() / "examples/argo/hello-dag.yaml").string();
  auto dot = plugboard({"graph", file});
  ASSERT_EQ(dot.exit_code, 0) << dot.err;
  EXPECT_EQ(dot.out.rfind("digraph \"hello-dag-\"", 0), 0u) << dot.out;
  EXPECT_NE(dot.out.find("greet-others\\ngreet: plugin hello\\nwithParam"), std::string::npos) << dot.out;
  EXPECT_NE(dot.out.find("label=\"onExit\""), std::string::npos) << dot.out;
  auto mermaid = plugboard({"graph", file, "--format", "mermaid"});
  ASSERT_EQ(mermaid.exit_code, 0) << mermaid.err;
  EXPECT_NE(mermaid.out.find("flowchart LR"), std::string::npos);
  // A recursive template is drawn once on each path.
  auto recursive = plugboard({"graph", dir_.write("wf.yaml", std::string(kHeader) + R"(  entrypoint: flip
  templates:
    - name: flip
      steps:
        - - name: again
            template: flip
            when: "{{workflow.name}} == never"
)")});
  ASSERT_EQ(recursive.exit_code, 0) << recursive.err;
  EXPECT_NE(recursive.out.find("again\\nflip: steps"), std::string::npos) << recursive.out;
}

TEST_F(ArgoRunTest, AWorkflowTemplateRunsFromTheEntryPointGiven) {
  const std::string wft = R"(apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata:
  name: greeter
spec:
  templates:
    - name: main
      plugin:
        echo:
          said: hi
)";
  auto r = run(wft, {"--entrypoint", "main"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(parameter(status(r)["nodes"]["greeter"], "said"), "hi");
  auto none = run(wft);
  EXPECT_EQ(none.exit_code, 2);
  // One line: the model's checks do not add what follows from it.
  EXPECT_EQ(none.err, file() + ":6:3: a WorkflowTemplate needs an entry point: give one "
                               "(--entrypoint) or set spec.entrypoint\n");
}

TEST_F(ArgoRunTest, ValidateSaysOkOrNamesTheProblem) {
  auto ok = run(std::string(kHeader) + R"(  entrypoint: main
  templates:
    - name: main
      plugin:
        echo: {}
)",
                {}, "validate");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("ok"), std::string::npos);
  auto bad = run(std::string(kHeader) + R"(  entrypoint: main
  templates:
    - name: main
      plugin:
        echo:
          x: "{{inputs.parameters.nope}}"
)",
                 {}, "validate");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("inputs.parameters.nope"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.rfind(file() + ":", 0), 0u) << bad.err;
}

// A template that calls itself forever stops where Argo's controller stops it
// (maxAllowedStackDepth, 100): the run ends in Error naming the template, with no crash,
// whether the call is a step or a dag task.
TEST_F(ArgoRunTest, ASelfCallingTemplateEndsTheRunInErrorAtTheMaximumDepth) {
  for (const std::string body : {R"(      steps:
        - - name: again
            template: forever
)",
                                 R"(      dag:
        tasks:
          - name: again
            template: forever
)"}) {
    auto r = run(std::string(kHeader) +
                 "  entrypoint: forever\n  templates:\n    - name: forever\n" + body);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    auto s = status(r);
    EXPECT_EQ(s["phase"], "Error") << body;
    EXPECT_EQ(s["message"],
              "error in entry template execution: Maximum recursion depth exceeded: template "
              "'forever' called 100 templates deep (the limit is 100)")
        << s.dump(2).substr(0, 2000);
    // Nothing was started below the call that stopped.
    EXPECT_LT(s["nodes"].size(), 250u);
    int stopped = 0;
    for (const auto& [id, n] : s["nodes"].items()) {
      stopped += n["phase"] == "Error" &&
                 n.value("message", "").starts_with("Maximum recursion depth exceeded");
    }
    EXPECT_EQ(stopped, 1);
  }
}

// The depth counts as Argo's does (the entry is 1): 99 nested calls run, 100 do not.
TEST_F(ArgoRunTest, RecursionThatEndsRunsUpToTheMaximumDepth) {
  const std::string wf = std::string(kHeader) + R"(  entrypoint: down
  arguments:
    parameters:
      - name: n
  templates:
    - name: down
      inputs:
        parameters:
          - name: n
      steps:
        - - name: next
            template: down
            when: "{{inputs.parameters.n}} > 0"
            arguments:
              parameters:
                - name: n
                  value: "{{=asInt(inputs.parameters.n) - 1}}"
)";
  auto deepest = run(wf, {"--param", "n=98"});
  EXPECT_EQ(deepest.exit_code, 0) << deepest.err << deepest.out.substr(0, 2000);
  auto over = run(wf, {"--param", "n=99"});
  EXPECT_EQ(over.exit_code, 1) << over.err;
  EXPECT_EQ(status(over)["phase"], "Error");
}

// An exit handler that calls its own template is a call below the one it handles: it
// stops at the same depth (here at a call of the step it handles), instead of growing
// until the memory runs out.
TEST_F(ArgoRunTest, AnExitHandlerCallingItsOwnTemplateStopsAtTheMaximumDepth) {
  auto r = run(std::string(kHeader) + R"(  entrypoint: main
  templates:
    - name: main
      steps:
        - - name: work
            template: echo
            hooks:
              exit:
                template: main
    - name: echo
      plugin:
        echo: {}
)");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto s = status(r);
  EXPECT_EQ(s["phase"], "Error");
  EXPECT_NE(
      s["message"].get<std::string>().find("Maximum recursion depth exceeded: template 'echo'"),
      std::string::npos)
      << s["message"];
}

// Argo gives a step no deadline unless its template or the workflow writes one: the
// default timeout of TOML steps (--default-timeout) does not reach an Argo step, which
// runs as long as it takes.
TEST_F(ArgoRunTest, AnArgoStepHasNoDefaultDeadline) {
  auto r = run(std::string(kHeader) + R"(  entrypoint: main
  templates:
    - name: main
      plugin:
        sleep:
          seconds: 1
)",
               {"--default-timeout", "100ms"});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(status(r)["phase"], "Succeeded");
}

// Recursion that does work and fans out is bounded by the nodes a run makes (max_nodes):
// the run ends in Error naming the template it was to start, and stops there.
TEST_F(ArgoRunTest, ARunStopsAtItsLimitOfNodes) {
  const std::string config = dir_.write("cfg.toml", "max_nodes = 300\n");
  auto r = run(std::string(kHeader) + R"(  entrypoint: tree
  templates:
    - name: tree
      steps:
        - - name: work
            template: echo
        - - name: left
            template: tree
          - name: right
            template: tree
    - name: echo
      plugin:
        echo: {}
)",
               {"--config", config});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto s = status(r);
  EXPECT_EQ(s["phase"], "Error");
  EXPECT_EQ(s["message"].get<std::string>().rfind(
                "Maximum number of nodes exceeded: the run has made 300 nodes (the limit is "
                "300) and was to start ",
                0),
            0u)
      << s["message"];
  // A few more than the limit at most: the calls of the group being started.
  EXPECT_LE(s["nodes"].size(), 310u);
}

// A retried call keeps its latest 100 attempts: a large retryStrategy.limit costs no more
// nodes than that, and the attempts kept are the last ones, in order.
TEST_F(ArgoRunTest, ARetriedCallKeepsItsLatestAttempts) {
  auto r = run(std::string(kHeader) + R"(  entrypoint: flaky
  templates:
    - name: flaky
      retryStrategy:
        limit: "249"
      plugin:
        fail:
          message: always
)");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto s = status(r);
  EXPECT_EQ(s["phase"], "Failed");
  EXPECT_EQ(s["nodes"]["wf"]["message"], "No more retries left");
  std::vector<std::string> kept;
  for (const auto& [id, n] : s["nodes"].items()) {
    if (n["type"] == "Plugin") kept.push_back(n["displayName"]);
  }
  ASSERT_EQ(kept.size(), 100u);
  const auto& children = s["nodes"]["wf"]["children"];
  ASSERT_EQ(children.size(), 100u);
  EXPECT_EQ(s["nodes"][children[0].get<std::string>()]["displayName"], "wf(150)");
  EXPECT_EQ(s["nodes"][children[99].get<std::string>()]["displayName"], "wf(249)");
  EXPECT_EQ(s["nodes"][children[99].get<std::string>()]["message"], "always");
}

// A file nested deeper than 128 levels is refused where the nesting passes the limit,
// as it is read: the rest (100,000 levels, an unclosed quote) is never reached.
TEST_F(ArgoRunTest, AFileNestedTooDeeplyIsRefusedWhereItPassesTheLimit) {
  auto r = run(std::string(kHeader) + "  entrypoint: " + std::string(100'000, '[') + "\"open\n", {},
               "validate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, file() + ":6:141: nested deeper than 128 levels\n");
}

// Names Argo refuses (validate.go: metadata.name at most 63 characters; template, step and
// dag task names alpha-numeric and '-'; Kubernetes: metadata.name and generateName DNS-1123
// subdomains), a newline or `../` among them, are refused by validate and run alike, in one
// line with the file:line:column, the field and the rule: no name forges a line.
TEST_F(ArgoRunTest, NamesArgoRefusesAreRefusedInOneLineNamingTheFieldAndTheRule) {
  const std::string steps =
      "spec:\n  entrypoint: main\n  templates:\n    - name: main\n"
      "      steps:\n        - - name: STEP\n            template: hello\n"
      "    - name: hello\n      plugin:\n        echo:\n          said: hi\n";
  const auto workflow = [&](const std::string& meta, const std::string& step) {
    std::string text = std::string(kHeader).substr(0, std::string(kHeader).find("metadata:")) +
                       "metadata:\n  " + meta + "\n" + steps;
    return text.replace(text.find("STEP"), 4, step);
  };
  const std::string dns =
      "is invalid: a DNS-1123 subdomain must consist of lower case alphanumeric characters, "
      "'-' or '.', and must start and end with an alphanumeric character";
  const std::string field =
      "is invalid: name must consist of alpha-numeric characters or '-', and must start with "
      "an alpha-numeric character";
  struct Case {
    std::string yaml, line;
  };
  const std::vector<Case> cases = {
      {workflow(R"(name: "wf\nplugboard: step 'x' Succeeded")", "a"),
       ":4:9: metadata.name 'wf\\nplugboard: step 'x' Succeeded' " + dns},
      {workflow("name: ../wf", "a"), ":4:9: metadata.name '../wf' " + dns},
      {workflow("generateName: Wf-", "a"), ":4:17: metadata.generateName 'Wf-' " + dns},
      {workflow("name: " + std::string(64, 'w'), "a"),
       ":4:9: metadata.name '" + std::string(64, 'w') +
           "' is invalid: must not be more than 63 characters long (currently 64)"},
      {workflow("name: wf", R"("a\nplugboard: forged")"),
       ":10:13: template 'main': steps[0][0].name 'a\\nplugboard: forged' " + field},
      {workflow("name: wf", "../a"), ":10:13: template 'main': steps[0][0].name '../a' " + field},
  };
  for (const Case& c : cases) {
    for (const char* command : {"validate", "run"}) {
      SCOPED_TRACE(std::string(command) + ": " + c.yaml);
      const auto r = run(c.yaml, {}, command);
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_EQ(r.err, file() + c.line + "\n");
    }
  }
  // A template's and a dag task's name.
  std::string tmpl = workflow("name: wf", "a");
  tmpl.replace(tmpl.find("- name: hello"), 13, "- name: hel_lo");
  tmpl.replace(tmpl.find("template: hello"), 15, "template: hel_lo");
  auto r = run(tmpl, {}, "validate");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, file() + ":12:7: spec.templates[1].name 'hel_lo' " + field + "\n");
  std::string dag = std::string(kHeader).substr(0, std::string(kHeader).find("metadata:")) +
                    "metadata:\n  name: wf\nspec:\n  entrypoint: main\n  templates:\n"
                    "    - name: main\n      dag:\n        tasks:\n          - name: ../t\n"
                    "            template: hello\n    - name: hello\n      plugin:\n"
                    "        echo:\n          said: hi\n";
  r = run(dag, {}, "validate");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, file() + ":11:13: template 'main': dag.tasks[0].name '../t' " + field + "\n");
  // What Argo accepts stays accepted: dots in metadata.name, a generateName ending in '-',
  // upper case and digits first in the other names.
  std::string good = workflow("generateName: wf.v1-", "0-Greet");
  r = run(good);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// A sum of many terms is a flat chain, not a deep tree: it evaluates.
TEST_F(ArgoRunTest, AnExpressionOfManyTermsIsNotNestedTooDeeply) {
  std::string sum = "1";
  for (int i = 0; i < 300; ++i) sum += " + 1";
  std::string yaml = std::string(kHeader) +
                     "  entrypoint: main\n  templates:\n    - name: main\n      plugin:\n"
                     "        echo:\n          said: \"{{=" +
                     sum + "}}\"\n";
  auto r = run(yaml);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(parameter(status(r)["nodes"]["wf"], "said"), "301");
}

// An expression's error quotes the expression cut, not 100 KB of it, with the position.
TEST_F(ArgoRunTest, AnExpressionErrorQuotesALongExpressionCut) {
  const std::string text = "'" + std::string(100'000, 'x') + "' +";
  std::string yaml = std::string(kHeader) +
                     "  entrypoint: main\n  templates:\n    - name: main\n      plugin:\n"
                     "        echo:\n          said: \"{{=" +
                     text + "}}\"\n";
  auto r = run(yaml, {}, "validate");
  EXPECT_EQ(r.exit_code, 2) << r.err.substr(0, 2000);
  EXPECT_LT(r.err.size(), 400u) << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("... (100009 bytes): expression ends early at 100005"), std::string::npos)
      << r.err.substr(0, 2000);
  // At run time too: the step's message.
  yaml.replace(yaml.find(text), text.size(), "asInt('x') + '" + std::string(100'000, 'x') + "'");
  r = run(yaml);
  EXPECT_EQ(r.exit_code, 1) << r.err.substr(0, 2000);
  const std::string message = status(r)["nodes"]["wf"]["message"].get<std::string>();
  EXPECT_LT(message.size(), 400u) << message.substr(0, 2000);
  EXPECT_NE(message.find("... (100020 bytes): 'x' is not an integer at 1"), std::string::npos)
      << message.substr(0, 2000);
}

}  // namespace
}  // namespace plugboard::testing

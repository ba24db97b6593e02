// `plugboard validate`, `graph` and `run` on an Arcaflow workflow (workflow.yaml, `version:
// v0.2.0`) through the real binary: told from Argo YAML by its content, the engine's exit
// codes (cmd/arcaflow/main.go: 1 for an invalid workflow or input, 2 an error output, 3 a
// failed workflow), problems with file:line:column or the bad input field's path,
// --context for relative files. `run` runs real ATP plugins (tests/fixtures/atp/
// atp_fixture.py through the atp deployer) and prints the engine's output.
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

constexpr const char* kWorkflow = R"(version: v0.2.0
input:
  root: RootObject
  objects:
    RootObject:
      id: RootObject
      properties:
        name:
          type:
            type_id: string
            pattern: ^[a-zA-Z]+$
steps:
  greet:
    plugin:
      src: quay.io/arcalot/arcaflow-plugin-example:0.5.1
      deployment_type: image
    input:
      name: !expr $.input.name
  count:
    plugin:
      src: quay.io/arcalot/arcaflow-plugin-example:0.5.1
      deployment_type: image
    input:
      text: !expr $.steps.greet.outputs.success.message
outputs:
  success:
    words: !expr $.steps.count.outputs.success.words
)";

class ArcaflowRunTest : public ::testing::Test {
 protected:
  // validate reads the steps' plugins' schemas: the example image's plugin is a stand-in
  // from the registry, an ATP plugin whose one step takes `name` or `text`.
  RunResult validate(const std::string& yaml, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"validate", dir_.write("workflow.yaml", yaml)};
    args.insert(args.end(), extra.begin(), extra.end());
    return plugboard(withPlugin(args), cache());
  }
  std::vector<std::string> withPlugin(std::vector<std::string> args) {
    const std::string plugin = dir_.write(
        "example.py", "import sys\nsys.path.insert(0, '" +
                          (sourceDir() / "plugins" / "arcaflow").string() +
                          "')\nimport atpkit as k\nS = {'type_id': 'string'}\n"
                          "IN = k.scope('In', {'In': {'name': k.prop(S, required=False), "
                          "'text': k.prop(S, required=False)}})\n"
                          "OUT = k.scope('Out', {'Out': {'message': k.prop(S)}})\n"
                          "k.serve({'steps': {'hello-world': k.step('hello-world', IN, "
                          "{'success': OUT})}}, {'hello-world': lambda run, config: "
                          "('success', {'message': 'hi'})})\n");
    args.insert(args.end(),
                {"--registry",
                 dir_.write("registry.toml",
                            "[plugins.arcaflow-plugin-example.\"0.5.1\"]\natp = { path = \"" +
                                plugin + "\" }\n")});
    return args;
  }
  RunOptions cache() {
    RunOptions options;
    options.env = {"XDG_CACHE_HOME=" + (dir_ / "cache").string()};
    return options;
  }
  TempDir dir_;
};

TEST_F(ArcaflowRunTest, ValidatesAWorkflowAndItsInput) {
  dir_.write("input.yaml", "name: Arca\n");
  const auto r = validate(kWorkflow, {"--input", (dir_ / "input.yaml").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ok: Arcaflow workflow, 2 steps, outputs success; the steps' inputs fit "
                       "their plugins' schemas\n"),
            std::string::npos)
      << r.out;
}

TEST_F(ArcaflowRunTest, TakesRelativeFilesFromTheContext) {
  dir_.write("workflow.yaml", kWorkflow);
  dir_.write("input.yaml", "name: Arca\n");
  const auto r = plugboard(withPlugin({"validate", "workflow.yaml", "--context",
                                       dir_.path().string(), "--input", "input.yaml"}),
                           cache());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(ArcaflowRunTest, InvalidInputIsExitOneWithTheFieldsPath) {
  dir_.write("input.yaml", "name: Arca123\n");
  auto r = validate(kWorkflow, {"--input", (dir_ / "input.yaml").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("input.name"), std::string::npos) << r.err;
  dir_.write("input.yaml", "other: 1\n");
  r = validate(kWorkflow, {"--input", (dir_ / "input.yaml").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("other"), std::string::npos) << r.err;
  dir_.write("input.yaml", "name: Arca\nname: Flow\n");
  r = validate(kWorkflow, {"--input", (dir_ / "input.yaml").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("input.yaml:2:1: key 'name' is given twice"), std::string::npos) << r.err;
  dir_.write("input.yaml", "name: Arca\n---\nname: Flow\n");
  r = validate(kWorkflow, {"--input", (dir_ / "input.yaml").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("input.yaml:3:1: an input file is one YAML document"), std::string::npos)
      << r.err;
  r = validate(kWorkflow, {"--input", (dir_ / "missing.yaml").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("missing.yaml"), std::string::npos) << r.err;
}

// A workflow nested deeper than 128 levels is refused where the nesting passes the
// limit, as it is read: the rest (100,000 levels, an unclosed quote) is never reached.
TEST_F(ArcaflowRunTest, AWorkflowNestedTooDeeplyIsRefusedWhereItPassesTheLimit) {
  const auto r = validate("version: v0.2.0\ninput: " + std::string(100'000, '[') + "\"open\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, (dir_ / "workflow.yaml").string() + ":2:135: nested deeper than 128 levels\n");
}

TEST_F(ArcaflowRunTest, InvalidWorkflowIsExitOneWithFileLineColumn) {
  std::string text = kWorkflow;
  text.replace(text.find("v0.2.0"), 6, "v0.1.0");
  auto r = validate(text);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("workflow.yaml:1:10: version 'v0.1.0' is not supported (only v0.2.0)"),
            std::string::npos)
      << r.err;
  text = kWorkflow;
  text.replace(text.find("!expr $.input.name"), 18, "!expr $.steps.count.outputs.success.x");
  r = validate(text);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("cycle: greet -> count -> greet"), std::string::npos) << r.err;
  text = kWorkflow;
  text.replace(text.find("!expr $.input.name"), 18, "!unknown x");
  r = validate(text);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("workflow.yaml:18:13: step 'greet': unknown tag '!unknown'"),
            std::string::npos)
      << r.err;
}

TEST_F(ArcaflowRunTest, CtrlCStopsAStartThatReadsASchemaAndSaysNothingWasChecked) {
  // A plugin without a cached schema is started by validate to read it; this one never
  // answers its hello.
  const std::string registry = dir_.write(
      "mute.toml",
      "[plugins.mute.\"1.0.0\"]\natp = { command = [\"/usr/bin/python3\", \"-c\", \"import sys, "
      "time; print('mute plugin runs', file=sys.stderr, flush=True); time.sleep(600)\"] }\n");
  const std::string workflow = dir_.write("workflow.yaml", R"(version: v0.2.0
input:
  root: In
  objects:
    In:
      id: In
      properties: {}
steps:
  a:
    plugin: {src: mute, deployment_type: python}
    input: {}
outputs:
  success:
    a: !expr $.steps.a.outputs.success
)");
  RunOptions options = cache();
  options.signals = {{SIGINT, "mute plugin runs"}};
  // At info, the plugin's stderr is logged as it comes: the signal is sent once it runs.
  const auto r = plugboard(
      {"validate", workflow, "--registry", registry, "--log-level", "info"}, options);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;  // as a cancelled run
  EXPECT_NE(r.err.find("not checked: cancelled"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(ArcaflowRunTest, GraphsTheStepsInTheEnginesOrder) {
  const auto r = plugboard({"graph", dir_.write("workflow.yaml", kWorkflow)});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("greet"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("count"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("->"), std::string::npos) << r.out;  // count after greet
}

// Two echo steps of the ATP test plugin (registered as "fix"): `second` reads `first`'s
// count, an integer the plugin's schema requires (text would be refused).
constexpr const char* kRunWorkflow = R"(version: v0.2.0
input:
  root: In
  objects:
    In:
      id: In
      properties:
        text:
          type:
            type_id: string
        n:
          type:
            type_id: integer
        enable:
          type:
            type_id: bool
          default: "true"
steps:
  first:
    plugin:
      src: fix
      deployment_type: python
    step: echo
    input:
      text: !expr $.input.text
      count: !expr $.input.n
  second:
    plugin:
      src: fix
      deployment_type: python
    step: echo
    enabled: !expr $.input.enable
    input:
      text: !expr '"again " + $.steps.first.outputs.success.text'
      count: !expr $.steps.first.outputs.success.count
outputs:
  success:
    count: !expr $.steps.first.outputs.success.count
    second: !ordisabled $.steps.second.outputs.success
  error:
    reason: !expr $.steps.first.outputs.error.error
)";

class ArcaflowRunWorkflowTest : public ::testing::Test {
 protected:
  std::string registry() {
    const std::string fixtures = (sourceDir() / "tests" / "fixtures" / "atp").string();
    return dir_.write("registry.toml",
                      "[plugins.fix.\"1.0.0\"]\natp = { module = \"atp_fixture\", path = \"" +
                          fixtures +
                          "\" }\n"
                          // A plugin that writes a line to a file each time it starts.
                          "[plugins.counted.\"1.0.0\"]\natp = { command = [\"/bin/sh\", \"-c\", "
                          "\"echo start >> " +
                          (dir_ / "starts").string() + "; exec /usr/bin/python3 " + fixtures +
                          "/atp_fixture.py --atp\"] }\n");
  }
  RunResult run(const std::string& input, std::vector<std::string> more = {},
                const std::string& workflow = kRunWorkflow) {
    std::vector<std::string> args = {"run",        dir_.write("workflow.yaml", workflow),
                                     "--input",    dir_.write("input.yaml", input),
                                     "--registry", registry()};
    args.insert(args.end(), more.begin(), more.end());
    RunOptions options;
    options.env = {"XDG_CACHE_HOME=" + (dir_ / "cache").string()};
    return plugboard(args, options);
  }
  TempDir dir_;
};

TEST_F(ArcaflowRunWorkflowTest, TheBundledExampleRunsAndValidatesAsTheReadmeSays) {
  // README.md and tools/demo.sh: examples/arcaflow/workflow.yaml with its input, the
  // welcome plugin from examples/registry.toml; run from the source directory.
  const std::string example = (sourceDir() / "examples" / "arcaflow").string();
  const std::string registry = (sourceDir() / "examples" / "registry.toml").string();
  RunOptions options;
  options.env = {"XDG_CACHE_HOME=" + (dir_ / "cache").string()};
  auto r = plugboard({"run", example + "/workflow.yaml", "--input", example + "/input.yaml",
                      "--registry", registry},
                     options);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out,
            "output_data:\n"
            "    message: \"Welcome, Ada!\"\n"
            "    words: 2\n"
            "output_id: success\n")
      << r.err;
  r = plugboard({"validate", example + "/workflow.yaml", "--input", example + "/input.yaml",
                 "--registry", registry},
                options);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("the steps' inputs fit their plugins' schemas"), std::string::npos)
      << r.out;
}

TEST_F(ArcaflowRunWorkflowTest, PrintsTheSuccessOutputWithTypedValues) {
  const auto r = run("text: hi\nn: 3\n");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // The count stays an integer from the input through both steps (the plugin's schema
  // refuses text), and the output is the engine's YAML, keys sorted.
  EXPECT_EQ(r.out,
            "output_data:\n"
            "    count: 3\n"
            "    second:\n"
            "        count: 3\n"
            "        result: enabled\n"
            "        tags:\n"
            "            - a\n"
            "            - b\n"
            "        text: again hi\n"
            "output_id: success\n")
      << r.err;
}

TEST_F(ArcaflowRunWorkflowTest, AnErrorOutputIsExitTwo) {
  const auto r = run("text: fail\nn: 1\n");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.out, "output_data:\n    reason: asked to fail\noutput_id: error\n") << r.err;
  // The output `error` resolved when `first` answered: the run ended there, and `second`
  // (which read an output `first` did not give) never ran.
  EXPECT_NE(r.err.find("second (second): Omitted"), std::string::npos) << r.err;
}

TEST_F(ArcaflowRunWorkflowTest, AFailedStepIsExitThree) {
  const auto r = run("text: raise\nn: 1\n");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("workflow failed: no workflow output could be produced"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("text 'raise' is not allowed"), std::string::npos) << r.err;
}

TEST_F(ArcaflowRunWorkflowTest, BadInputIsTheEnginesExitThreeWithItsPathAndStartsNothing) {
  std::string workflow = kRunWorkflow;
  for (auto at = workflow.find("src: fix"); at != std::string::npos;
       at = workflow.find("src: fix", at + 1))
    workflow.replace(at, 8, "src: counted");
  // The engine's runWorkflow exits ExitCodeWorkflowFailed (3) for input its Execute
  // refuses; plugboard refuses it before any plugin starts.
  auto r = run("text: hi\nn: three\n", {}, workflow);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("input.n"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "starts"));
  r = run("n: 1\n", {}, workflow);  // text is required
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("text"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "starts"));
  // The same workflow with good input starts the plugin once for both steps.
  r = run("text: hi\nn: 2\n", {}, workflow);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(readFile(dir_ / "starts"), "start\n");
}

TEST_F(ArcaflowRunWorkflowTest, ADisabledStepResolvesOrDisabled) {
  const auto r = run("text: hi\nn: 2\nenable: false\n");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out,
            "output_data:\n"
            "    count: 2\n"
            "    second:\n"
            "        message: Step second/echo disabled\n"
            "        result: disabled\n"
            "output_id: success\n")
      << r.err;
}

TEST_F(ArcaflowRunWorkflowTest, JsonOutputKeepsTheStatusForScripts) {
  const auto r = run("text: hi\nn: 1\n", {"--output", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["output_id"], "success") << j;
  EXPECT_EQ(j["output_data"]["second"]["count"], 1) << j;
  EXPECT_EQ(j["status"]["phase"], "Succeeded") << j;
}

TEST_F(ArcaflowRunWorkflowTest, TakesTheEnginesConfig) {
  const std::string config = dir_.write(
      "config.yaml", "log:\n  level: error\ndeployers:\n  image:\n    deployer_name: docker\n");
  auto r = run("text: hi\nn: 1\n", {"--config", config});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("deployers.image: deployer_name 'docker' runs with podman here"),
            std::string::npos)
      << r.err;
  // A deployment type the engine has no deployers for.
  dir_.write("config.yaml", "deployers:\n  vm:\n    deployer_name: podman\n");
  r = run("text: hi\nn: 1\n", {"--config", config});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("config.yaml: deployers.vm is not a deployment type (image, python)"),
            std::string::npos)
      << r.err;
  dir_.write("config.yaml", "loglevel: error\n");
  r = run("text: hi\nn: 1\n", {"--config", config});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("config.yaml: unknown key 'loglevel'"), std::string::npos) << r.err;
  // The podman deployer's NetworkMode is the container's network (the examples suite runs
  // config-file with it); one that is no string is exit 1, naming it.
  dir_.write("config.yaml",
             "deployers:\n  image:\n    deployer_name: podman\n    deployment:\n      host:\n"
             "        NetworkMode: [host]\n");
  r = run("text: hi\nn: 1\n", {"--config", config});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("deployers.image.deployment.host.NetworkMode must be a string"),
            std::string::npos)
      << r.err;
}

constexpr const char* kNoInput = R"(version: v0.2.0
input:
  root: In
  objects:
    In:
      id: In
      properties: {}
)";

TEST_F(ArcaflowRunWorkflowTest, StopIfCancelsARunningStepAndKeepsItsAnswer) {
  // `long` waits 30 s unless cancelled; it is stopped once `quick` gave an output, and
  // the plugin's answer to the cancel (its output `cancelled`, a number) is its output.
  const std::string workflow = std::string(kNoInput) + R"(steps:
  long:
    plugin: {src: fix, deployment_type: python}
    step: wait
    input:
      ms: 30000
    stop_if: !expr $.steps.quick.outputs
  quick:
    plugin: {src: fix, deployment_type: python}
    step: sleep
    input:
      ms: 1000
outputs:
  success:
    stopped_after: !expr $.steps.quick.outputs.success.waited
    waited_ms: !expr $.steps.long.outputs.cancelled.waited_ms
)";
  const auto r = run("{}\n", {"--parallel", "4"}, workflow);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("    stopped_after: 1000\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    waited_ms: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("waited_ms: \""), std::string::npos) << r.out;  // a number
  EXPECT_NE(r.out.find("output_id: success\n"), std::string::npos) << r.out;
}

TEST_F(ArcaflowRunWorkflowTest, ClosureWaitTimeoutDecidesHowLongACancelledStepIsWaitedFor) {
  // Two steps that take 1.5 s to answer a cancel, both stopped once `quick` ended: the one
  // waited for 100 ms is killed, the one waited for 20 s answers, and its answer is kept.
  // Each closure wait is its own process (the atp deployer's cancel_grace is a plugin's):
  // the kill does not reach the patient step.
  const std::string workflow = std::string(kNoInput) + R"(steps:
  short:
    plugin: {src: counted, deployment_type: python}
    step: linger
    input: {ms: 30000, answer_ms: 1500}
    closure_wait_timeout: 100
    stop_if: !expr $.steps.quick.outputs
  patient:
    plugin: {src: counted, deployment_type: python}
    step: linger
    input: {ms: 30000, answer_ms: 1500}
    closure_wait_timeout: 20000
    stop_if: !expr $.steps.quick.outputs
  quick:
    plugin: {src: counted, deployment_type: python}
    step: sleep
    input: {ms: 500}
outputs:
  success:
    kept: !expr $.steps.patient.outputs.cancelled.waited_ms
)";
  const auto r = run("{}\n", {"--parallel", "4", "--output", "json"}, workflow);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["output_id"], "success") << j;
  EXPECT_TRUE(j["output_data"]["kept"].is_number_integer()) << j;
  EXPECT_NE(r.out.find("did not answer a cancel within 100ms and was killed"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("within 20s"), std::string::npos) << r.out;
  // quick (the default wait), short and patient: three processes.
  EXPECT_EQ(readFile(dir_ / "starts"), "start\nstart\nstart\n");
}

TEST_F(ArcaflowRunWorkflowTest, AStepsDeployAndClosureWaitAreCheckedBeforeAnythingStarts) {
  const std::string head = std::string(kNoInput) + R"(steps:
  a:
    plugin: {src: counted, deployment_type: python}
    step: echo
    input: {text: hi}
)";
  const std::string tail = "outputs:\n  success:\n    text: !expr $.steps.a.outputs.success.text\n";
  const std::string file = (dir_ / "workflow.yaml").string();
  // A key the python deployer's configuration does not have: where it is written.
  auto r = run("{}\n", {}, head + "    deploy:\n      deployer_name: python\n      pythonpath: /x\n" + tail);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(file + ":15:7: step 'a': deploy.pythonpath is not a key of the python "
                              "deployer's configuration (pythonPath, workdir, pythonSemver, "
                              "modulePullPolicy)"),
            std::string::npos)
      << r.err;
  // A deployer of another deployment type, and none.
  r = run("{}\n", {}, head + "    deploy:\n      deployer_name: podman\n" + tail);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(file + ":14:7: step 'a': deploy.deployer_name 'podman' is not a deployer "
                              "of python plugins (python)"),
            std::string::npos)
      << r.err;
  r = run("{}\n", {}, head + "    deploy:\n      pythonPath: /usr/bin/python3\n" + tail);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(file + ":14:7: step 'a': deploy has no deployer_name (python)"),
            std::string::npos)
      << r.err;
  // A value plugboard maps, or the whole deploy, given by an expression: read before the
  // run, so it must be written out.
  r = run("{}\n", {},
          head + "    deploy:\n      deployer_name: python\n      pythonPath: !expr $.input\n" + tail);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(file + ":15:7: step 'a': deploy.pythonPath must be a string"),
            std::string::npos)
      << r.err;
  r = run("{}\n", {}, head + "    deploy: !expr $.input\n" + tail);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(file + ":13:13: step 'a': deploy must be a mapping with deployer_name "
                              "(python), written out"),
            std::string::npos)
      << r.err;
  // A closure wait that is no number of milliseconds.
  for (const char* bad : {"-1", "soon", "!expr $.input"}) {
    r = run("{}\n", {}, head + "    closure_wait_timeout: " + bad + "\n" + tail);
    EXPECT_EQ(r.exit_code, 1) << bad << r.out << r.err;
    EXPECT_NE(r.err.find(file + ":13:27: step 'a': closure_wait_timeout must be an integer of "
                                "milliseconds, at least 0"),
              std::string::npos)
        << bad << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "starts"));
}

TEST_F(ArcaflowRunWorkflowTest, AStepsPythonDeployGivesItsInterpreter) {
  // pythonPath is the interpreter the plugins run with: the config's deployers.python names
  // it for every python step (one that does not exist fails the step's start, naming it);
  // a step's own deploy cannot name a program for the host to run (a workflow gets no more
  // than a container does), and says where it may be set.
  std::string workflow = std::string(kNoInput) + R"(steps:
  a:
    plugin: {src: fix, deployment_type: python}
    step: echo
    input: {text: hi}
    deploy:
      deployer_name: python
      pythonPath: /nonexistent/python3
outputs:
  success:
    text: !expr $.steps.a.outputs.success.text
)";
  auto r = run("{}\n", {}, workflow);
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("option 'python' may be set only in the configuration file"),
            std::string::npos)
      << r.err;
  const std::string config = dir_.write(
      "config.yaml",
      "deployers:\n  python:\n    deployer_name: python\n    pythonPath: /nonexistent/py\n");
  workflow.replace(workflow.find("    deploy:"), workflow.find("outputs:") - workflow.find("    deploy:"), "");
  r = run("{}\n", {"--config", config}, workflow);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("/nonexistent/py"), std::string::npos) << r.err;
  r = run("{}\n", {}, workflow);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(ArcaflowRunWorkflowTest, OneOfTakesTheOptionThatResolvesAndOptionalsAreLeftOut) {
  const std::string workflow = std::string(kNoInput) + R"(steps:
  first:
    plugin: {src: fix, deployment_type: python}
    step: echo
    input:
      text: hi
output:
  pick: !oneof
    discriminator: kind
    one_of:
      bad:
        reason: !expr $.steps.first.outputs.error.error
      good:
        text: !expr $.steps.first.outputs.success.text
  maybe_error: !wait-optional $.steps.first.outputs.error.error
  tags: !soft-optional $.steps.first.outputs.success.tags
)";
  const auto r = run("{}\n", {}, workflow);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // The deprecated `output` is the output "success".
  EXPECT_EQ(r.out,
            "output_data:\n"
            "    pick:\n"
            "        kind: good\n"
            "        text: hi\n"
            "    tags:\n"
            "        - a\n"
            "        - b\n"
            "output_id: success\n")
      << r.err;
}

TEST_F(ArcaflowRunWorkflowTest, AStepWhosePluginIsUnknownIsExitOneBeforeAnythingRuns) {
  std::string workflow = kRunWorkflow;
  workflow.replace(workflow.find("src: fix"), 8, "src: nosuch");
  const auto r = run("text: hi\nn: 1\n", {}, workflow);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("template 'first'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nosuch"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(ArcaflowRunWorkflowTest, BadValuesAtRunTimeNameTheStepAndTheLine) {
  // `enabled` that is not a boolean: the step is an error, no output resolves.
  std::string workflow = kRunWorkflow;
  workflow.replace(workflow.find("enabled: !expr $.input.enable"), 29, "enabled: !expr $.input.n");
  auto r = run("text: hi\nn: 1\n", {}, workflow);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("step 'second': enabled: 1 is not a boolean"), std::string::npos) << r.err;
  // An expression whose operands do not fit (text + integer): its file, line and column.
  workflow = kRunWorkflow;
  workflow.replace(workflow.find("\"again \" + $.steps.first.outputs.success.text"), 45,
                   "\"again \" + $.steps.first.outputs.success.count");
  r = run("text: hi\nn: 1\n", {}, workflow);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("step 'second': input: " + (dir_ / "workflow.yaml").string() + ":34:"),
            std::string::npos)
      << r.err;
}

// The input as the engine's expressions see it: Unserialize then Serialize of its scope
// (the Go SDK's schema/float.go, int.go, bool.go), so a float written `0` or "0.01" is a
// float, integer and bool text are an integer and a bool. The engine's own fixtures
// (fixtures/test-subworkflow) multiply a float input by 1000.0 and pass floatToInt of it
// to a step: with `seconds: 0` that must run.
constexpr const char* kTypedInput = R"(version: v0.2.0
input:
  root: In
  objects:
    In:
      id: In
      properties:
        seconds:
          type:
            type_id: float
            min: 0
        times:
          type:
            type_id: integer
          required: false
        loud:
          type:
            type_id: bool
          required: false
steps:
  w:
    plugin: {src: fix, deployment_type: python}
    step: wait
    input:
      ms: !expr floatToInt($.input.seconds * 1000.0)
outputs:
  success:
    waited: !expr $.steps.w.outputs.success.waited
    half: !expr $.input.seconds / 2.0
)";

TEST_F(ArcaflowRunWorkflowTest, InputValuesTakeTheTypesTheirScopeDeclares) {
  auto r = run("seconds: 0\n", {}, kTypedInput);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("waited: 0\n"), std::string::npos) << r.out << r.err;
  r = run("seconds: \"0.01\"\n", {}, kTypedInput);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("waited: 10\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("half: 0.005\n"), std::string::npos) << r.out << r.err;
  // Integer and bool text: `times + 1` is integer arithmetic, `loud` a boolean (the SDKs'
  // words in any case, 1 and 0).
  std::string workflow = kTypedInput;
  workflow += "    more: !expr $.input.times + 1\n    loud: !expr $.input.loud\n";
  r = run("seconds: 0\ntimes: \"2\"\nloud: \"Yes\"\n", {}, workflow);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("more: 3\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("loud: true\n"), std::string::npos) << r.out << r.err;
  r = run("seconds: 0\ntimes: 2\nloud: 0\n", {}, workflow);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("loud: false\n"), std::string::npos) << r.out << r.err;
  r = run("seconds: 0\ntimes: 2\nloud: 2\n", {}, workflow);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("input.loud"), std::string::npos) << r.err;
  // Text that is no number stays a bad input: the engine's exit 3, with its path.
  r = run("seconds: soon\n", {}, kTypedInput);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("input.seconds"), std::string::npos) << r.err;
}

TEST_F(ArcaflowRunWorkflowTest, AForeachItemTakesTheTypesOfTheSubWorkflowsInput) {
  // Items written in the workflow as integers, for a sub-workflow whose input is a float.
  dir_.write("sub.yaml", kTypedInput);
  const std::string workflow = std::string(kNoInput) + R"(steps:
  each:
    kind: foreach
    items: [{seconds: 0}, {seconds: 1}]
    workflow: sub.yaml
outputs:
  success:
    all: !expr $.steps.each.outputs.success.data
)";
  const auto r = run("{}\n", {}, workflow);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("half: 0.5\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("waited: 1000\n"), std::string::npos) << r.out << r.err;
}

// The engine's workflow_test.go TestWorkflowWithEscapedCharacters, case for case: the
// same text written with each quoting of YAML (plain, single, double, block) and of the
// expression language (`raw`, '...', "..." with their escapes), with four backslashes in
// the input, must give one string. The engine's test step (the `builtin` deployer, which
// only its tests have) answers "Plugin slept for 0 ms."; here the ATP plugin's echo does.
// <TAB> stands for a tab character inside the raw strings, as in the engine's file.
constexpr const char* kEscapes = R"yaml(version: v0.2.0
input:
  root: In
  objects:
    In:
      id: In
      properties:
        a:
          type:
            type_id: string
steps:
  no_wait:
    plugin: {src: fix, deployment_type: python}
    step: echo
    input:
      text: Plugin slept for 0 ms.
outputs:
  success:
    raw_inlined: !expr '`"` + $.input.a + `" and "\\" and "''"''" and "<TAB>" \t ` + $.steps.no_wait.outputs.success.text'
    raw_block: !expr |-
      `"` + $.input.a + `" and "\\" and "'"'" and "<TAB>" \t ` + $.steps.no_wait.outputs.success.text
    single_in_single: !expr '"\"" + $.input.a + "\" and \"\\\\\" and \"''\"''\" and \"\t\" \\t " + $.steps.no_wait.outputs.success.text'
    single_in_double: !expr "'\"' + $.input.a + '\" and \"\\\\\\\\\" and \"\\'\"\\'\" and \"\t\" \\\\t ' + $.steps.no_wait.outputs.success.text"
    single_block: !expr |-
      '"' + $.input.a + '" and "\\\\" and "\'"\'" and "\t" \\t ' + $.steps.no_wait.outputs.success.text
    double_block: !expr |-
      "\"" + $.input.a + "\" and \"\\\\\" and \"'\"'\" and \"\t\" \\t " + $.steps.no_wait.outputs.success.text
)yaml";

TEST_F(ArcaflowRunWorkflowTest, EscapedCharactersGiveTheEnginesString) {
  std::string workflow = kEscapes;
  for (auto at = workflow.find("<TAB>"); at != std::string::npos; at = workflow.find("<TAB>"))
    workflow.replace(at, 5, "\t");
  const auto r = run("a: '\\\\\\\\'\n", {"--output", "json"}, workflow);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << r.out;
  const std::string want =
      "\"\\\\\\\\\" and \"\\\\\" and \"'\"'\" and \"\t\" \\t Plugin slept for 0 ms.";
  ASSERT_EQ(doc["output_data"].size(), 6u) << r.out;
  for (const auto& [key, value] : doc["output_data"].items())
    EXPECT_EQ(value, want) << key;
}

// A sub-workflow for a foreach: each item is its input.
constexpr const char* kSubWorkflow = R"(version: v0.2.0
input:
  root: Item
  objects:
    Item:
      id: Item
      properties:
        text:
          type:
            type_id: string
        n:
          type:
            type_id: integer
steps:
  echo:
    plugin: {src: counted, deployment_type: python}
    step: echo
    input:
      text: !expr $.input.text
      count: !expr $.input.n
outputs:
  success:
    n: !expr $.input.n
    said: !expr $.steps.echo.outputs.success.text
)";

constexpr const char* kForeachWorkflow = R"(steps:
  each:
    kind: foreach
    items: !expr $.input.items
    workflow: sub.yaml
    parallelism: 2
outputs:
  success:
    all: !expr $.steps.each.outputs.success.data
  error:
    done: !expr $.steps.each.outputs.error.data
    why: !expr $.steps.each.outputs.error.messages
)";

std::string foreachWorkflow() {
  return R"(version: v0.2.0
input:
  root: In
  objects:
    In:
      id: In
      properties:
        items:
          type:
            type_id: list
            items:
              type_id: ref
              id: Item
              namespace: $.steps.each.execute.inputs.items
)" + std::string(kForeachWorkflow);
}

TEST_F(ArcaflowRunWorkflowTest, ForeachRunsTheSubWorkflowPerItemInItemOrder) {
  dir_.write("sub.yaml", kSubWorkflow);
  const auto r = run("items: [{text: a, n: 1}, {text: b, n: 2}, {text: c, n: 3}]\n", {},
                     foreachWorkflow());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // internal/step/foreach/provider.go: success {data: [each item's output, in item order]};
  // the counts stay integers through the item, the plugin and the sub-workflow's output
  // (the key "n" is quoted, being a YAML 1.1 boolean).
  EXPECT_EQ(r.out,
            "output_data:\n"
            "    all:\n"
            "        - \"n\": 1\n"
            "          said: a\n"
            "        - \"n\": 2\n"
            "          said: b\n"
            "        - \"n\": 3\n"
            "          said: c\n"
            "output_id: success\n")
      << r.err;
  // One plugin process served all three items.
  EXPECT_EQ(readFile(dir_ / "starts"), "start\n");
  // validate and graph take the same model.
  const auto g = plugboard({"graph", (dir_ / "workflow.yaml").string()});
  EXPECT_EQ(g.exit_code, 0) << g.out << g.err;
  EXPECT_NE(g.out.find("each"), std::string::npos) << g.out;
}

TEST_F(ArcaflowRunWorkflowTest, AForeachWithAFailedItemGivesTheErrorOutput) {
  dir_.write("sub.yaml", kSubWorkflow);
  // Item 1's step answers `error`: the sub-workflow gives no `success`, so the foreach's
  // output is `error` with the data of the items that succeeded and a message for it.
  const auto r = run("items: [{text: a, n: 1}, {text: fail, n: 2}, {text: c, n: 3}]\n", {},
                     std::string(foreachWorkflow()));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("output_id: error\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("said: a\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("said: c\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("said: fail"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("$.steps.echo.outputs.success"), std::string::npos) << r.out;
  // The items are keyed by their index, an integer (processInput's map[int]any), as the
  // engine's YAML prints it.
  EXPECT_NE(r.out.find("    done:\n        0:\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("        2:\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    why:\n        1: "), std::string::npos) << r.out;
}

// Items over the 16 MiB value limit end the foreach's loop in Error before any item runs:
// the step gives no output (never `success` with no data), so the run fails naming why.
TEST_F(ArcaflowRunWorkflowTest, AForeachWhoseItemsCannotBeTakenIsNoSuccess) {
  dir_.write("sub.yaml", kSubWorkflow);
  const std::string text(9 << 20, 'a');
  const auto r = run(
      R"({"items": [{"text": ")" + text + R"(", "n": 1}, {"text": ")" + text + R"(", "n": 2}]})",
      {}, foreachWorkflow());
  EXPECT_EQ(r.exit_code, 3) << r.out.substr(0, 1000) << r.err.substr(0, 3000);
  EXPECT_EQ(r.out.find("output_id: success"), std::string::npos) << r.out.substr(0, 1000);
  EXPECT_NE(r.err.find("workflow failed: no workflow output could be produced; step 'items' "
                       "Error: withParam: a filled value is larger than the limit of 16777216 "
                       "bytes"),
            std::string::npos)
      << r.err.substr(0, 3000);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "starts"));
}

// An output whose expression fails ends the workflow in Error: the tree says so, as the
// exit status does.
TEST_F(ArcaflowRunWorkflowTest, AnOutputThatCannotBeMadeIsAnErrorInTheTreeToo) {
  std::string workflow = kRunWorkflow;
  const std::string count =
      "outputs:\n  success:\n    count: !expr $.steps.first.outputs.success.count\n";
  workflow.insert(workflow.find(count) + count.size(), "    file: !expr readFile(\"nope.txt\")\n");
  const auto r = run("text: hi\nn: 1\n", {}, workflow);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(r.err.find("Succeeded"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Status:              Error\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("workflow failed: output 'success': "), std::string::npos) << r.err;
}

TEST_F(ArcaflowRunWorkflowTest, AForeachItemThatFitsNoInputIsExitThreeBeforeAnythingRuns) {
  dir_.write("sub.yaml", kSubWorkflow);
  const auto r = run("items: [{text: a, n: one}]\n", {}, foreachWorkflow());
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("input.items[0].n"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "starts"));
}

TEST_F(ArcaflowRunWorkflowTest, AForeachItemOfTheWorkflowThatFitsNoInputFailsTheStep) {
  // Items written in the workflow are checked when the step starts, each against the
  // sub-workflow's input, before any runs (foreach/provider.go ProvideStageInput).
  dir_.write("sub.yaml", kSubWorkflow);
  const std::string workflow = std::string(kNoInput) + R"(steps:
  each:
    kind: foreach
    items: [{text: a, n: 1}, {text: b, n: two}]
    workflow: sub.yaml
outputs:
  success:
    all: !expr $.steps.each.outputs.success.data
)";
  const auto r = run("{}\n", {}, workflow);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("step 'each': invalid input item 1 for the sub-workflow: input.n"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "starts"));
}

TEST_F(ArcaflowRunWorkflowTest, ASubWorkflowThatCannotBeReadIsExitOneNamingIt) {
  auto r = run("items: []\n", {}, foreachWorkflow());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("sub.yaml"), std::string::npos) << r.err;
  // A sub-workflow without an output `success` (foreach/provider.go LoadSchema).
  std::string sub = kSubWorkflow;
  sub.replace(sub.find("  success:"), 10, "  done:");
  dir_.write("sub.yaml", sub);
  r = run("items: []\n", {}, foreachWorkflow());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("step 'each': the sub-workflow sub.yaml has no output 'success'"),
            std::string::npos)
      << r.err;
  // A missing input file: named, exit 1.
  r = plugboard({"run", dir_.write("workflow.yaml", kRunWorkflow), "--input",
                 (dir_ / "missing.yaml").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("missing.yaml"), std::string::npos) << r.err;
}

// The node of the step named `name` in `--output json`'s status (null when none).
nlohmann::json stepNode(const nlohmann::json& out, const std::string& name) {
  for (const auto& [id, node] : out["status"]["nodes"].items()) {
    if (node.value("displayName", "") == name) return node;
  }
  return nullptr;
}

// The output parameter `name` of a node (empty when none).
std::string outputParameter(const nlohmann::json& node, const std::string& name) {
  if (!node.is_object() || !node.contains("outputs")) return "";
  for (const auto& p : node["outputs"].value("parameters", nlohmann::json::array())) {
    if (p.value("name", "") == name) return p.value("value", "");
  }
  return "";
}

TEST_F(ArcaflowRunWorkflowTest, TheFirstOutputToResolveEndsTheRunAndStopsTheOtherSteps) {
  // `success` resolves once `quick` answered: the run ends then (workflow.go Execute
  // returns with the first output node resolved and closes the other steps): `long` is
  // cancelled and its plugin's answer is its outcome; `after`, waiting for it, never runs.
  const std::string workflow = std::string(kNoInput) + R"(steps:
  quick:
    plugin: {src: fix, deployment_type: python}
    step: echo
    input:
      text: hi
  long:
    plugin: {src: fix, deployment_type: python}
    step: wait
    input:
      ms: 20000
  after:
    plugin: {src: fix, deployment_type: python}
    step: echo
    wait_for: !expr $.steps.long.outputs
    input:
      text: later
outputs:
  slow:
    waited: !expr $.steps.long.outputs.success.waited
  success:
    text: !expr $.steps.quick.outputs.success.text
)";
  const auto r = run("{}\n", {"--parallel", "4", "--output", "json"}, workflow);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  EXPECT_EQ(j["output_id"], "success") << j;
  EXPECT_EQ(j["output_data"], nlohmann::json({{"text", "hi"}})) << j;
  // Cancelled: the plugin answered the cancel with its output `cancelled` (or was not
  // called yet), not `success` 20 s on.
  EXPECT_NE(stepNode(j, "long").value("phase", ""), "Succeeded") << j;
  EXPECT_NE(stepNode(j, "long").value("message", "").find("cancelled"), std::string::npos) << j;
  EXPECT_EQ(stepNode(j, "after").value("phase", ""), "Omitted") << j;
  EXPECT_EQ(outputParameter(stepNode(j, "quick"), "text"), "hi") << j;
}

TEST_F(ArcaflowRunWorkflowTest, AForeachItemsOutputIsTheFirstOfItsOutputsToResolve) {
  // Each item's sub-workflow ends with its first output to resolve (`success`, once
  // `quick` answered; `slow`, first in the file, would need `long`, which is stopped).
  dir_.write("sub.yaml", R"(version: v0.2.0
input:
  root: Item
  objects:
    Item:
      id: Item
      properties:
        text:
          type:
            type_id: string
steps:
  long:
    plugin: {src: fix, deployment_type: python}
    step: wait
    input:
      ms: 20000
  quick:
    plugin: {src: fix, deployment_type: python}
    step: echo
    input:
      text: !expr $.input.text
outputs:
  slow:
    waited: !expr $.steps.long.outputs.success.waited
  success:
    said: !expr $.steps.quick.outputs.success.text
)");
  const std::string workflow = std::string(kNoInput) + R"(steps:
  each:
    kind: foreach
    items: [{text: a}, {text: b}]
    workflow: sub.yaml
    parallelism: 2
outputs:
  success:
    all: !expr $.steps.each.outputs.success.data
)";
  const auto r = run("{}\n", {"--parallel", "4"}, workflow);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out,
            "output_data:\n"
            "    all:\n"
            "        - said: a\n"
            "        - said: b\n"
            "output_id: success\n")
      << r.err;
}

// A sub-workflow whose step succeeds only once two of its runs are in the plugin at once.
constexpr const char* kMeetWorkflow = R"(version: v0.2.0
input:
  root: Item
  objects:
    Item:
      id: Item
      properties:
        n:
          type:
            type_id: integer
steps:
  meet:
    plugin: {src: fix, deployment_type: python}
    step: meet
    input:
      n: !expr $.input.n
outputs:
  success:
    met: !expr $.steps.meet.outputs.success.met
)";

TEST_F(ArcaflowRunWorkflowTest, AForeachsParallelismMayBeAnExpression) {
  // `parallelism: !expr $.input.p` is the execute stage's input, resolved as `items` is:
  // with 2, both items run at once and meet; taken as 1, neither would.
  dir_.write("sub.yaml", kMeetWorkflow);
  const std::string workflow = R"(version: v0.2.0
input:
  root: In
  objects:
    In:
      id: In
      properties:
        p:
          type:
            type_id: integer
steps:
  each:
    kind: foreach
    items: [{n: 2}, {n: 2}]
    workflow: sub.yaml
    parallelism: !expr $.input.p
outputs:
  success:
    all: !expr $.steps.each.outputs.success.data
)";
  auto r = run("p: 2\n", {"--parallel", "4"}, workflow);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "output_data:\n    all:\n        - met: 2\n        - met: 2\noutput_id: success\n")
      << r.err;
  // Below 1 (parallelismSchema's minimum): the step fails naming it, nothing runs.
  r = run("p: 0\n", {"--parallel", "4"}, workflow);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("step 'each': parallelism: 0 is not an integer of at least 1"),
            std::string::npos)
      << r.err;
}

TEST_F(ArcaflowRunWorkflowTest, SoftOptionalDoesNotWaitAndWaitOptionalDoes) {
  // !soft-optional: the output resolves once `quick` answered, without `long`'s value
  // (an OptionalDependency); !wait-optional waits for its step to end.
  const std::string steps = std::string(kNoInput) + R"(steps:
  quick:
    plugin: {src: fix, deployment_type: python}
    step: echo
    input:
      text: hi
  long:
    plugin: {src: fix, deployment_type: python}
    step: wait
    input:
      ms: MS
outputs:
  success:
    text: !expr $.steps.quick.outputs.success.text
    waited: TAG $.steps.long.outputs.success.waited
)";
  auto workflow = [&](const std::string& ms, const std::string& tag) {
    std::string w = steps;
    w.replace(w.find("MS"), 2, ms);
    w.replace(w.find("TAG"), 3, tag);
    return w;
  };
  auto r = run("{}\n", {"--parallel", "4"}, workflow("20000", "!soft-optional"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "output_data:\n    text: hi\noutput_id: success\n") << r.err;
  r = run("{}\n", {"--parallel", "4"}, workflow("300", "!wait-optional"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "output_data:\n    text: hi\n    waited: 300\noutput_id: success\n") << r.err;
}

TEST_F(ArcaflowRunWorkflowTest, OneOfTakesTheOptionThatResolvedFirst) {
  // Both options resolve in the end; `b`'s step answered first, so the output (resolved
  // then) is `b`, although `a` comes first by key (resolveOneOfExpression: the first OR
  // dependency resolved).
  const std::string workflow = std::string(kNoInput) + R"(steps:
  slow:
    plugin: {src: fix, deployment_type: python}
    step: wait
    input:
      ms: 5000
  fast:
    plugin: {src: fix, deployment_type: python}
    step: echo
    input:
      text: hi
outputs:
  success:
    pick: !oneof
      discriminator: kind
      one_of:
        a:
          waited: !expr $.steps.slow.outputs.success.waited
        b:
          text: !expr $.steps.fast.outputs.success.text
)";
  const auto r = run("{}\n", {"--parallel", "4"}, workflow);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "output_data:\n    pick:\n        kind: b\n        text: hi\noutput_id: success\n")
      << r.err;
}

TEST_F(ArcaflowRunWorkflowTest, InputDefaultsAreFilledInListItemsAndMapValues) {
  // The SDK's Unserialize fills a property's default in every object it reads: those of a
  // list's items and of a map's values too.
  const std::string workflow = R"(version: v0.2.0
input:
  root: In
  objects:
    In:
      id: In
      properties:
        things:
          type:
            type_id: list
            items: {type_id: ref, id: Thing}
        named:
          type:
            type_id: map
            keys: {type_id: string}
            values: {type_id: ref, id: Thing}
    Thing:
      id: Thing
      properties:
        text:
          type: {type_id: string}
        count:
          type: {type_id: integer}
          default: "2"
steps:
  first:
    plugin: {src: fix, deployment_type: python}
    step: echo
    input:
      text: !expr $.input.things[0].text
      count: !expr $.input.things[0].count
outputs:
  success:
    from_list: !expr $.steps.first.outputs.success.count
    from_map: !expr $.input.named.x.count
)";
  const auto r = run("things: [{text: hi}]\nnamed: {x: {text: y}}\n", {}, workflow);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "output_data:\n    from_list: 2\n    from_map: 2\noutput_id: success\n") << r.err;
}

// readFile() reads only files in the context directory: `..`, an absolute path and a
// symbolic link inside that points out are refused (the workflow fails, exit 3) naming the
// flag that widens it, and nothing of the file reaches the output; with
// --read-outside-context they are read, as the engine reads any file.
TEST_F(ArcaflowRunWorkflowTest, ReadFileReadsOnlyTheContextUnlessWidened) {
  std::filesystem::create_directories(dir_ / "context");
  dir_.write("context/inside.txt", "inside");
  dir_.write("secret.txt", "the secret");
  std::filesystem::create_symlink("../secret.txt", dir_ / "context/link.txt");
  std::string workflow = kRunWorkflow;
  workflow.replace(workflow.find("        enable:"), 0,
                   "        path:\n          type:\n            type_id: string\n");
  workflow.replace(workflow.find("    second: !ordisabled"), 0,
                   "    read: !expr readFile($.input.path)\n");
  const std::vector<std::string> context = {"--context", (dir_ / "context").string()};
  auto r = run("text: hi\nn: 1\nenable: false\npath: inside.txt\n", context, workflow);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("read: inside"), std::string::npos) << r.out;
  for (const std::string& path : std::vector<std::string>{
           "../secret.txt", "link.txt", (dir_ / "secret.txt").string(), "/proc/self/environ"}) {
    SCOPED_TRACE(path);
    r = run("text: hi\nn: 1\nenable: false\npath: " + path + "\n", context, workflow);
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_EQ(r.out.find("secret"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("readFile: " + path + ": cannot read the file: it is outside " +
                         (dir_ / "context").string() +
                         " (the context directory; --read-outside-context lets readFile read "
                         "any file)"),
              std::string::npos)
        << r.err;
  }
  std::vector<std::string> widened = context;
  widened.push_back("--read-outside-context");
  r = run("text: hi\nn: 1\nenable: false\npath: link.txt\n", widened, workflow);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("read: the secret"), std::string::npos) << r.out;
}

// A bad expression of 100 KB is quoted cut, with its position; a sum of many terms is a
// flat chain, not nested too deeply.
TEST_F(ArcaflowRunTest, ExpressionsLongAndFlatAreToldApart) {
  std::string workflow = kWorkflow;
  const std::string bad = "'$.input.name + \"" + std::string(100'000, 'x') + "\" +'";
  workflow.replace(workflow.find("$.input.name"), 12, bad);
  auto r = validate(workflow);
  EXPECT_EQ(r.exit_code, 1) << r.err.substr(0, 2000);
  EXPECT_LT(r.err.size(), 400u) << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("workflow.yaml:18:13: step 'greet': bad expression '$.input.name + \"xxx"),
            std::string::npos)
      << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("... (100019 bytes)': expected "), std::string::npos)
      << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("at column 100020"), std::string::npos) << r.err.substr(0, 2000);
  std::string sum = "$.input.name";
  for (int i = 0; i < 300; ++i) sum += " + $.input.name";
  workflow = kWorkflow;
  workflow.replace(workflow.find("$.input.name"), 12, sum);
  r = validate(workflow);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace plugboard::testing

// `plugboard validate` and `graph` on an Arcaflow workflow (workflow.yaml, `version:
// v0.2.0`) through the real binary: told from Argo YAML by its content, the engine's exit
// codes (cmd/arcaflow/main.go: 1 for an invalid workflow or input), problems with
// file:line:column or the bad input field's path, --context for relative files.
#include <string>
#include <vector>

#include <gtest/gtest.h>

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
  RunResult validate(const std::string& yaml, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"validate", dir_.write("workflow.yaml", yaml)};
    args.insert(args.end(), extra.begin(), extra.end());
    return plugboard(args);
  }
  TempDir dir_;
};

TEST_F(ArcaflowRunTest, ValidatesAWorkflowAndItsInput) {
  dir_.write("input.yaml", "name: Arca\n");
  const auto r = validate(kWorkflow, {"--input", (dir_ / "input.yaml").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ok: Arcaflow workflow, 2 steps, outputs success; the plugins' schemas "
                       "were not checked"),
            std::string::npos)
      << r.out;
}

TEST_F(ArcaflowRunTest, TakesRelativeFilesFromTheContext) {
  dir_.write("workflow.yaml", kWorkflow);
  dir_.write("input.yaml", "name: Arca\n");
  const auto r = plugboard({"validate", "workflow.yaml", "--context", dir_.path().string(),
                            "--input", "input.yaml"});
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

TEST_F(ArcaflowRunTest, RunRefusesInOneLineUntilRunningLands) {
  const std::string file = dir_.write("workflow.yaml", kWorkflow);
  auto r = plugboard({"run", file});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err, "plugboard: " + file +
                       ": running Arcaflow workflows is not supported yet; `plugboard validate` "
                       "and `plugboard graph` take them\n")
      << r.err;
  EXPECT_EQ(r.out, "");
  // Named as the context makes it, with the engine's other options given.
  dir_.write("input.yaml", "name: Arca\n");
  r = plugboard({"run", "workflow.yaml", "--context", dir_.path().string(), "--input",
                 "input.yaml"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find((dir_ / "workflow.yaml").string() + ": running Arcaflow workflows is "
                       "not supported yet"),
            std::string::npos)
      << r.err;
}

TEST_F(ArcaflowRunTest, GraphsTheStepsInTheEnginesOrder) {
  const auto r = plugboard({"graph", dir_.write("workflow.yaml", kWorkflow)});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("greet"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("count"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("->"), std::string::npos) << r.out;  // count after greet
}

}  // namespace
}  // namespace plugboard::testing

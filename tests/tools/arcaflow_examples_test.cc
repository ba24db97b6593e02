// Arcaflow's example workflows through tools/arcaflow-examples.sh, in its validate mode and
// with --run: the stand-in images of the plugins that basic-examples and the engine's
// fixtures use are made from their source checkouts and each read as an ATP plugin, then
// every workflow of basic-examples/ (and the engine's fixtures) gives what
// tests/fixtures/arcaflow-examples/expected.yaml says the engine gives. Runs only with
// ARCAFLOW_WORKFLOWS=<arcaflow-workflows checkout> (Arcaflow's files are not part of this
// repository), the plugins' and the SDK's checkouts beside it (or in
// ARCAFLOW_PLUGINS_SRC), and ARCAFLOW_ENGINE=<engine checkout> for the engine's fixtures.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/paths.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

// The suite's output (its table), with `more` options; skipped without ARCAFLOW_WORKFLOWS.
RunResult suite(std::vector<std::string> more = {}) {
  const char* workflows = std::getenv("ARCAFLOW_WORKFLOWS");
  std::vector<std::string> argv = {(sourceDir() / "tools" / "arcaflow-examples.sh").string(),
                                   workflows};
  argv.insert(argv.end(), more.begin(), more.end());
  if (const char* src = std::getenv("ARCAFLOW_PLUGINS_SRC"); src != nullptr && *src != '\0') {
    argv.insert(argv.end(), {"--plugins-src", src});
  }
  if (const char* engine = std::getenv("ARCAFLOW_ENGINE"); engine != nullptr && *engine != '\0') {
    argv.insert(argv.end(), {"--engine", engine});
  }
  RunOptions options;
  options.env = {"BUILD_DIR=" + buildDir().string()};
  RunResult r = run(argv, options);
  std::cout << r.out;
  return r;
}

bool haveWorkflows() {
  const char* workflows = std::getenv("ARCAFLOW_WORKFLOWS");
  return workflows != nullptr && *workflows != '\0';
}

TEST(ArcaflowExamples, EveryWorkflowValidatesAsTheEngineWouldAndEveryPluginImageIsRead) {
  if (!haveWorkflows()) {
    GTEST_SKIP() << "set ARCAFLOW_WORKFLOWS=<arcaflow-workflows checkout> (with the plugins' "
                    "checkouts beside it or in ARCAFLOW_PLUGINS_SRC)";
  }
  const RunResult r = suite();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // The plugins read, and the nine workflows of basic-examples (three of them
  // sub-workflows) valid.
  EXPECT_NE(r.out.find("| plugin quay.io/arcalot/arcaflow-plugin-metadata:0.5.0 | validate | passed"),
            std::string::npos);
  EXPECT_NE(r.out.find("| workflows:basic-examples/sub-workflow-foreach/workflow.yaml | validate | passed"),
            std::string::npos);
  EXPECT_NE(r.out.find(", failed 0, "), std::string::npos);
}

// --run: every basic example gives the engine's output with `plugboard run` (the
// config-file example sees the host's HOSTNAME only through the engine config's
// NetworkMode host; the foreach examples give {data: [...]} in item order).
TEST(ArcaflowExamples, EveryBasicExampleRunsAsTheEngineWould) {
  if (!haveWorkflows()) GTEST_SKIP() << "set ARCAFLOW_WORKFLOWS=<arcaflow-workflows checkout>";
  const RunResult r = suite({"--run", "--only", "basic-examples"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* wf : {"basic", "bind-constants", "config-file", "namespaced-scopes", "parallel",
                         "quoting", "serial-data_passing", "serial-wait_for",
                         "sub-workflow-foreach"}) {
    EXPECT_NE(r.out.find("| workflows:basic-examples/" + std::string(wf) +
                         "/workflow.yaml | run | passed"),
              std::string::npos)
        << wf;
  }
  EXPECT_NE(r.out.find(", failed 0, "), std::string::npos);
}

// --run of the engine's fixtures as the engine's tests use them: workflow-happy.yaml with
// input {} (engine_test.go Test_CacheSubworkflows) through three depths of sub-workflows
// calling the utilities plugin's stand-in, a depth-1 file alone with a float written `0`,
// test-readFile's file through readFile() (functions_test.go), and the error cases with
// their exit codes (the table's `departs` where plugboard's differs).
TEST(ArcaflowExamples, TheEnginesFixturesRunAsItsTestsRunThem) {
  const char* engine = std::getenv("ARCAFLOW_ENGINE");
  if (!haveWorkflows() || engine == nullptr || *engine == '\0')
    GTEST_SKIP() << "set ARCAFLOW_WORKFLOWS and ARCAFLOW_ENGINE=<arcaflow-engine checkout>";
  const RunResult r = suite({"--run", "--only", "fixtures/"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| plugin quay.io/arcalot/arcaflow-plugin-utilities:0.6.1 | call | passed"),
            std::string::npos);
  for (const char* row : {"test-subworkflow/workflow-happy.yaml | run",
                          "test-subworkflow/depth-1_workflow-1.yaml (seconds 0) | run",
                          "test-subworkflow/depth-1_workflow-1.yaml (seconds -1) | run",
                          "test-subworkflow/depth-1_workflow-1.yaml (no input) | run",
                          "test-subworkflow/workflow-happy.yaml (missing input file) | run",
                          "test-readFile/hello-world.yaml | run",
                          "test-readFile/hello-world.yaml (nonexistent-file) | run"}) {
    EXPECT_NE(r.out.find("| engine:fixtures/" + std::string(row) + " | passed"), std::string::npos)
        << row;
  }
  EXPECT_NE(r.out.find(", failed 0, "), std::string::npos);
}

}  // namespace
}  // namespace plugboard::testing

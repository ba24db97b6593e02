// plugboard graph on the bundled example workflows, through the real binary: DOT that
// Graphviz renders (when installed), Mermaid checked line by line, colours from a run.
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

std::string example(const char* name) { return (sourceDir() / "examples" / name).string(); }

RunResult graph(std::vector<std::string> extra) {
  std::vector<std::string> args = {"graph"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(),
              {"--plugins", pluginDir().string(), "--deployers", deployerDir().string()});
  return plugboard(args);
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool hasDot() { return run({"sh", "-c", "command -v dot"}).exit_code == 0; }

TEST(GraphTest, DotShowsEachStepWithItsPluginRpcAndDeployer) {
  auto r = graph({example("hello.toml")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("digraph \"hello-pipeline\" {\n")) << r.out;
  EXPECT_NE(r.out.find("\"greet\" [label=\"greet\\nhello@1.2.0\\ntemplate.execute\\nnative\"]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"shout\" [label=\"shout\\nmulti@1.0.0\\ntext.upper\\nnative\"]"),
            std::string::npos)
      << r.out;
  for (const char* edge : {"\"greet\" -> \"shout\";", "\"greet\" -> \"count\";",
                           "\"shout\" -> \"report\";", "\"count\" -> \"report\";"}) {
    EXPECT_NE(r.out.find(edge), std::string::npos) << edge << "\n" << r.out;
  }
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '>'), 4) << r.out;
}

TEST(GraphTest, EachStepShowsTheDeployerItChoosesOrIsGiven) {
  auto r = graph({example("deployers.toml")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"greet\" [label=\"greet\\nhello@1.2.0\\ntemplate.execute\\nprocess\"]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"shout\" [label=\"shout\\nmulti@1.0.0\\ntext.upper\\nnative\"]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("\"count\" [label=\"count\\nmulti@1.0.0\\ntext.count\\nprocess memory=1G\"]"),
      std::string::npos)
      << r.out;
}

TEST(GraphTest, APolledStepAndRegistryPluginsShowHowTheyRun) {
  auto polled = graph({example("pipeline.toml")});
  ASSERT_EQ(polled.exit_code, 0) << polled.err;
  EXPECT_NE(
      polled.out.find(
          "\"recount\" [label=\"recount\\nword-counter (polled)\\ntext.count\\ndeployer: ?\"]"),
      std::string::npos)
      << polled.out;
  auto mixed = graph({example("mixed.toml"), "--registry", example("registry.toml")});
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  EXPECT_NE(mixed.out.find("\"embedded\" [label=\"embedded\\npyhello@1.0.0\\ntemplate.execute\\n"
                           "python mode=embedded\"]"),
            std::string::npos)
      << mixed.out;
}

TEST(GraphTest, GraphvizRendersTheDotOfEveryExample) {
  if (!hasDot()) GTEST_SKIP() << "Graphviz's dot is not installed (tools/setup.sh installs it)";
  // The examples that name the registry's plugins need it; the others run without.
  for (const std::string name :
       {"hello.toml", "deployers.toml", "pipeline.toml", "mixed.toml", "containers.toml"}) {
    std::vector<std::string> args = {example(name.c_str())};
    if (name == "mixed.toml" || name == "containers.toml") {
      args.insert(args.end(), {"--registry", example("registry.toml")});
    }
    auto r = graph(args);
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    auto svg = run({"dot", "-Tsvg"}, r.out);
    EXPECT_EQ(svg.exit_code, 0) << name << ": " << svg.err;
    EXPECT_NE(svg.out.find("<svg"), std::string::npos) << name;
    EXPECT_EQ(svg.err, "") << name;
  }
}

TEST(GraphTest, MermaidHasANodePerStepAndAnEdgePerDependency) {
  auto r = graph({example("hello.toml"), "--format", "mermaid"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = linesOf(r.out);
  ASSERT_GE(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0], "---");
  EXPECT_EQ(lines[1], "title: \"hello-pipeline\"");
  EXPECT_EQ(lines[2], "---");
  EXPECT_EQ(lines[3], "flowchart LR");
  std::vector<std::string> nodes, edges;
  for (std::size_t i = 4; i < lines.size(); ++i) {
    if (lines[i].find("-->") != std::string::npos) {
      edges.push_back(lines[i]);
    } else {
      nodes.push_back(lines[i]);
    }
  }
  EXPECT_EQ(nodes, (std::vector<std::string>{
                       "  s0[\"greet<br/>hello@1.2.0<br/>template.execute<br/>native\"]",
                       "  s1[\"shout<br/>multi@1.0.0<br/>text.upper<br/>native\"]",
                       "  s2[\"count<br/>multi@1.0.0<br/>text.count<br/>native\"]",
                       "  s3[\"report<br/>legacy-executor-plugin@0.9.0<br/>template.execute<br/>"
                       "native\"]"}));
  EXPECT_EQ(edges,
            (std::vector<std::string>{"  s0 --> s1", "  s0 --> s2", "  s1 --> s3", "  s2 --> s3"}));
}

TEST(GraphTest, ARunsPhasesColourItsSteps) {
  TempDir dir;
  auto ran = plugboard(
      {"run", example("hello.toml"), "--plugins", pluginDir().string(), "--output", "json"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  // One step's phase changed by hand: each phase gets its own colour.
  std::string result = ran.out;
  const auto at = result.find("\"phase\": \"Succeeded\"");
  ASSERT_NE(at, std::string::npos);
  result.replace(at, std::string("\"phase\": \"Succeeded\"").size(), "\"phase\": \"Failed\"");
  const std::string file = dir.write("run.json", result);

  auto dot = graph({example("hello.toml"), "--run-output", file});
  ASSERT_EQ(dot.exit_code, 0) << dot.err;
  EXPECT_EQ(std::count(dot.out.begin(), dot.out.end(), '\n'), 4 + 4 + 4 + 1) << dot.out;
  std::size_t green = 0, red = 0;
  for (const auto& line : linesOf(dot.out)) {
    green += line.find("\\nSucceeded\", fillcolor=\"#b7e4c7\"]") != std::string::npos;
    red += line.find("\\nFailed\", fillcolor=\"#f4a6a6\"]") != std::string::npos;
  }
  EXPECT_EQ(green, 3u) << dot.out;
  EXPECT_EQ(red, 1u) << dot.out;

  auto mermaid = graph({example("hello.toml"), "--format", "mermaid", "--run-output", file});
  ASSERT_EQ(mermaid.exit_code, 0) << mermaid.err;
  EXPECT_NE(mermaid.out.find("  classDef Succeeded fill:#b7e4c7,stroke:#555555\n"),
            std::string::npos)
      << mermaid.out;
  EXPECT_NE(mermaid.out.find("  classDef Failed fill:#f4a6a6,stroke:#555555\n"), std::string::npos)
      << mermaid.out;
  if (hasDot()) EXPECT_EQ(run({"dot", "-Tsvg"}, dot.out).exit_code, 0);
}

TEST(GraphTest, BadInputIsRefusedNamingTheFile) {
  TempDir dir;
  auto format = graph({example("hello.toml"), "--format", "png"});
  EXPECT_EQ(format.exit_code, 2);
  EXPECT_EQ(format.err, "plugboard: --format must be dot or mermaid, got 'png'\n");
  const std::string not_a_run = dir.write("other.json", "{\"plugins\": []}");
  auto run_output = graph({example("hello.toml"), "--run-output", not_a_run});
  EXPECT_EQ(run_output.exit_code, 2);
  EXPECT_NE(run_output.err.find(not_a_run + ": not the output of `plugboard run --output json`"),
            std::string::npos)
      << run_output.err;
  auto missing = graph({example("hello.toml"), "--run-output", (dir / "none.json").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("none.json: cannot read the run output"), std::string::npos);
  const std::string broken = dir.write("broken.toml", "name = \"x\"\n[[steps]]\nid = 3\n");
  auto workflow = graph({broken});
  EXPECT_EQ(workflow.exit_code, 2);
  EXPECT_NE(workflow.err.find(broken + ":"), std::string::npos) << workflow.err;
  auto help = plugboard({"graph", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: plugboard graph WORKFLOW"), std::string::npos);
  EXPECT_NE(help.out.find("--run-output"), std::string::npos);
}

}  // namespace
}  // namespace plugboard::testing

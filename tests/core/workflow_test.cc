#include "core/workflows/workflow.h"
#include "core/workflows/workflow_check.h"

#include <gtest/gtest.h>

#include "core/base/read_file.h"
#include "tests/support/paths.h"
#include "tests/support/workflow_dump.h"

namespace plugboard::core {
namespace {

std::vector<std::string> problemsOf(const char* text) {
  std::vector<std::string> out;
  for (const auto& p : parseWorkflow(text, "wf.toml").problems) out.push_back(p.oneLine());
  return out;
}

bool has(const std::vector<std::string>& lines, const std::string& wanted) {
  for (const auto& l : lines) {
    if (l == wanted) return true;
  }
  ADD_FAILURE() << "missing: " << wanted << "\nin:\n"
                << [&] {
                     std::string all;
                     for (const auto& l : lines) all += l + "\n";
                     return all;
                   }();
  return false;
}

TEST(WorkflowTest, ParsesEveryField) {
  auto loaded = parseWorkflow(R"(
name = "demo"
[inputs]
who = "world"
n = { default = 3, description = "how many" }
need = { description = "required" }

[[steps]]
id = "a"
plugin = "hello@1.2"
rpc = "hello.greet"
args = { name = "${inputs.who}", list = [1, 2] }
timeout = "1m30s"
retry = { limit = 2, backoff = "250ms", factor = 3 }

[[steps]]
id = "b"
plugin = "echo"
depends = ["a"]
timeout = 5
poll = true
args = { text = "${steps.a.outputs.parameters.greeting}" }
)",
                              "wf.toml");
  ASSERT_TRUE(loaded.ok()) << (loaded.problems.empty() ? "" : loaded.problems[0].oneLine());
  const Workflow& wf = *loaded.workflow;
  EXPECT_EQ(wf.name, "demo");
  ASSERT_EQ(wf.inputs.size(), 3u);
  EXPECT_EQ(*wf.inputs[1].default_value, Json(3));
  EXPECT_FALSE(wf.inputs[2].default_value);
  ASSERT_EQ(wf.steps.size(), 2u);
  const auto& a = wf.steps[0];
  EXPECT_EQ(a.plugin, "hello");
  EXPECT_EQ(a.version, "1.2");
  EXPECT_EQ(a.rpc, "hello.greet");
  EXPECT_EQ(a.args["list"], Json({1, 2}));
  EXPECT_EQ(a.timeout->count(), 90'000);
  EXPECT_EQ(a.retry.limit, 2);
  EXPECT_EQ(a.retry.backoff.count(), 250);
  EXPECT_EQ(a.retry.factor, 3);
  EXPECT_EQ(a.pos.line, 8);
  const auto& b = wf.steps[1];
  EXPECT_EQ(b.rpc, "template.execute");
  EXPECT_EQ(b.depends, std::vector<std::string>{"a"});
  EXPECT_EQ(b.timeout->count(), 5000);
  EXPECT_TRUE(b.poll);
}

TEST(WorkflowTest, SyntaxErrorsCarryLineAndColumn) {
  auto p = problemsOf("name = \"x\"\n[[steps]]\nid = \"a\"\nplugin = \n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].rfind("wf.toml:4:", 0), 0u) << p[0];
  EXPECT_NE(p[0].find("TOML syntax error"), std::string::npos);
}

TEST(WorkflowTest, ReportsStructuralProblemsWithLineAndStep) {
  auto p = problemsOf(R"(name = "x"
colour = "red"
[[steps]]
id = "a"
plugin = "hello"
argz = {}
depends = ["ghost"]
timeout = "soon"
retry = { limit = -1, jitter = 1 }
[[steps]]
id = "a"
plugin = "bad name!"
[[steps]]
id = "c"
)");
  has(p, "wf.toml:2:1: unknown key 'colour' (expected name, description, inputs, steps, outputs)");
  has(p,
      "wf.toml:6:1: step 'a': unknown key 'argz' (expected id, plugin, rpc, args, parameters, "
      "depends, timeout, retry, poll, deploy, when, items, exit, description)");
  has(p,
      "wf.toml:8:11: step 'a': 'timeout': invalid duration 'soon': use a number with ms, s, m or "
      "h, e.g. 500ms, 30s, 1m30s");
  has(p, "wf.toml:9:19: step 'a': 'retry.limit' must be an integer from 0 to 1000");
  has(p, "wf.toml:9:23: step 'a': unknown key 'retry.jitter' (expected limit, backoff, factor)");
  has(p, "wf.toml:3:1: step 'a': depends on unknown step 'ghost'");
  has(p, "wf.toml:10:1: step 'a': another step already has the id 'a'");
  has(p, "wf.toml:12:10: step 'a': 'plugin' must be NAME or NAME@VERSION, got 'bad name!'");
  has(p, "wf.toml:13:1: step 'c': the step has no 'plugin'");
}

TEST(WorkflowTest, FindsCycles) {
  auto p = problemsOf(R"(name = "x"
[[steps]]
id = "a"
plugin = "echo"
depends = ["c"]
[[steps]]
id = "b"
plugin = "echo"
depends = ["a"]
[[steps]]
id = "c"
plugin = "echo"
depends = ["b"]
)");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], "wf.toml:6:1: step 'b': dependency cycle: a -> c -> b -> a");
}

// 50,000 steps in a line, each using the output of the one before, the last one the
// first's: checked in time linear in the steps, with no recursion as deep as the line.
TEST(WorkflowTest, ALongChainIsCheckedStepByStep) {
  std::string text = "name = \"line\"\n";
  const int n = 50'000;
  for (int i = 0; i < n; ++i) {
    text += "[[steps]]\nid = \"s" + std::to_string(i) + "\"\nplugin = \"echo\"\n";
    if (i == 0) continue;
    const std::string from = "s" + std::to_string(i == n - 1 ? 0 : i - 1);
    text += "depends = [\"s" + std::to_string(i - 1) + "\"]\nargs = { x = \"${steps." + from +
            ".outputs.parameters.x}\" }\n";
  }
  text += "[[steps]]\nid = \"loop\"\nplugin = \"echo\"\ndepends = [\"loop\"]\n";
  EXPECT_EQ(problemsOf(text.c_str()),
            std::vector<std::string>{"wf.toml:" + std::to_string(5 * n) +
                                     ":1: step 'loop': depends on itself"});
}

// Read a step at a time, a file gives what it gives read whole: the same steps, values,
// positions and problems, in the same order. `by_step` says whether it can be read so.
void expectReadAlike(const std::string& text, bool by_step, const std::string& label) {
  SCOPED_TRACE(label);
  const auto whole = testing::workflowDump(parseWorkflow(text, label, WorkflowReading::kWhole));
  const auto pieces = parseWorkflowByStep(text, label);
  EXPECT_EQ(pieces.has_value(), by_step);
  if (pieces) EXPECT_EQ(testing::workflowDump(*pieces).dump(1), whole.dump(1));
  EXPECT_EQ(testing::workflowDump(parseWorkflow(text, label)).dump(1), whole.dump(1));
}

TEST(WorkflowTest, AFileReadAStepAtATimeReadsAsTheWholeFile) {
  // Problems in several keys and steps, told in the same order.
  expectReadAlike(R"(name = "x"
colour = "red"
[inputs]
who = { default = "me", colour = 1 }
[[steps]]
id = "a"
plugin = "echo"
argz = {}
depends = ["ghost"]
args = { text = "${inputs.nobody} ${steps.b.outputs.parameters.x}" }
[[steps]]
id = "a"
plugin = "bad name!"
[[steps]]  # the last one
id = "c"
timeout = "soon"
[steps.args]
text = "${item}"
[steps.parameters]
n = 1
[outputs]
out = "${steps.zz.outputs.parameters.x}"
"bad name!" = "x"
)", true, "problems.toml");
  // A [[steps]] line inside multi-line strings is text, not a step.
  expectReadAlike(R"(name = "x"
[[steps]]
id = "a"
plugin = "echo"
[steps.args]
text = """
[[steps]]
id = "b"
"""
more = '''
[[steps]]
'''
[[steps]]
id = "c"
plugin = "echo"
)", false, "strings.toml");
  // A syntax error in the third step: the whole file's error, with its line.
  expectReadAlike(R"(name = "x"
[[steps]]
id = "a"
plugin = "echo"
[[steps]]
id = "b"
plugin = "echo"
[[steps]]
id = "c"
plugin =
)", false, "syntax.toml");
  // A table the prelude opens and a later piece goes on with: merged, as whole.
  expectReadAlike(R"(name = "x"
[inputs]
a = 1
[[steps]]
id = "a"
plugin = "echo"
[inputs.b]
default = 2
)", false, "inputs.toml");
  // Steps also given another way, or two steps in one piece: read whole.
  expectReadAlike(R"(name = "x"
steps = []
[[steps]]
id = "a"
plugin = "echo"
)", false, "static.toml");
  expectReadAlike(R"(name = "x"
[[steps]]
id = "a"
plugin = "echo"
[["steps"]]
id = "b"
plugin = "echo"
)", false, "quoted.toml");
  // No name, no prelude; spaces, a comment, CRLF and a byte-order mark.
  expectReadAlike("[[steps]]\nid = \"a\"\nplugin = \"echo\"\n", true, "bare.toml");
  expectReadAlike("\xEF\xBB\xBFname = \"x\"\r\n[[ steps ]]\t# one\r\nid = \"a\"\r\n"
                  "plugin = \"echo\"\r\n  [[steps]]\r\nid = \"b\"\r\nplugin = \"echo\"\r\n"
                  "depends = [\"a\", \"a\"]\r\n", true, "crlf.toml");
  // Every example (each read a step at a time) and fuzzing seed (some made not to be).
  for (const std::string dir : {"examples", "fuzz/corpus/workflow"}) {
    for (const auto& entry : std::filesystem::directory_iterator(testing::sourceDir() / dir)) {
      if (entry.path().extension() != ".toml") continue;
      auto text = readTextFile(entry.path(), "workflow");
      ASSERT_TRUE(text.ok()) << entry.path();
      SCOPED_TRACE(entry.path().string());
      const auto whole = testing::workflowDump(
          parseWorkflow(*text, entry.path().string(), WorkflowReading::kWhole));
      EXPECT_EQ(testing::workflowDump(parseWorkflow(*text, entry.path().string())).dump(1),
                whole.dump(1));
      if (dir == "examples" && whole["problems"].empty()) {
        EXPECT_TRUE(parseWorkflowByStep(*text, entry.path().string()).has_value());
      }
    }
  }
}

TEST(WorkflowTest, ChecksReferences) {
  auto p = problemsOf(R"(name = "x"
[inputs]
who = "me"
[[steps]]
id = "a"
plugin = "echo"
args = { x = "${inputs.nobody}", y = "${steps.b.outputs.parameters.v}", z = "${steps.zz.outputs.parameters.v}" }
[[steps]]
id = "b"
plugin = "echo"
args = { bad = "${inputs.who" }
)");
  has(p, "wf.toml:4:1: step 'a': ${inputs.nobody}: the workflow has no input 'nobody'");
  has(p,
      "wf.toml:4:1: step 'a': ${steps.b.outputs.parameters.v}: step 'a' does not depend on 'b'; "
      "add it to depends");
  has(p, "wf.toml:4:1: step 'a': ${steps.zz.outputs.parameters.v}: there is no step 'zz'");
  has(p,
      "wf.toml:8:1: step 'b': args: unterminated reference in \"${inputs.who\": '${' without '}'");
}

TEST(WorkflowTest, ChecksPluginsRpcsAndSchemasWithoutLoading) {
  auto catalog = Catalog::scan({plugboard::testing::pluginDir()});
  auto loaded = parseWorkflow(R"(name = "x"
[inputs]
who = 42
[[steps]]
id = "missing"
plugin = "nosuch"
[[steps]]
id = "wrong-rpc"
plugin = "multi"
[[steps]]
id = "bad-args"
plugin = "hello"
args = { name = "${inputs.who}" }
[[steps]]
id = "bad-output"
plugin = "multi"
rpc = "text.upper"
args = { text = "${steps.bad-args.outputs.parameters.farewell}" }
depends = ["bad-args"]
[[steps]]
id = "polled"
plugin = "nosuch"
poll = true
)",
                              "wf.toml");
  ASSERT_TRUE(loaded.problems.empty()) << loaded.problems[0].oneLine();
  auto inputs = resolveInputs(*loaded.workflow, {});
  ASSERT_TRUE(inputs.ok());
  std::vector<std::string> p;
  for (const auto& problem : checkWorkflow(*loaded.workflow, catalog, *inputs)) {
    p.push_back(problem.oneLine());
  }
  has(p,
      "wf.toml:4:1: step 'missing': no plugin 'nosuch' is installed (installed: echo, fail, hello, "
      "legacy-executor-plugin, multi, sleep); to let the providers of 'template.execute' be polled "
      "instead, set poll = true");
  has(p,
      "wf.toml:7:1: step 'wrong-rpc': plugin 'multi' does not provide 'template.execute'; it "
      "provides: text.upper, text.count");
  has(p,
      "wf.toml:10:1: step 'bad-args': args.name: expected string, got integer (schema of hello "
      "template.execute)");
  has(p,
      "wf.toml:14:1: step 'bad-output': ${steps.bad-args.outputs.parameters.farewell}: plugin "
      "'hello' outputs only greeting");
  EXPECT_EQ(p.size(), 4u);
}

TEST(WorkflowTest, ResolvesInputsFromParams) {
  auto loaded = parseWorkflow(R"(name = "x"
[inputs]
who = "world"
n = 1
flag = false
need = { description = "no default" }
[[steps]]
id = "a"
plugin = "echo"
)",
                              "wf.toml");
  ASSERT_TRUE(loaded.ok());
  const Workflow& wf = *loaded.workflow;
  auto values = resolveInputs(wf, {{"n", "7"}, {"flag", "true"}, {"need", "x"}});
  ASSERT_TRUE(values.ok()) << values.error().message();
  EXPECT_EQ(*values, Json({{"who", "world"}, {"n", 7}, {"flag", true}, {"need", "x"}}));
  EXPECT_EQ(resolveInputs(wf, {{"need", "x"}, {"nope", "1"}}).error().message(),
            "--param nope: the workflow has no input 'nope' (inputs: who, n, flag, need)");
  EXPECT_EQ(resolveInputs(wf, {{"need", "x"}, {"n", "many"}}).error().message(),
            "--param n=many: expected an integer");
  EXPECT_EQ(resolveInputs(wf, {}).error().message(),
            "input 'need' has no default: pass --param need=VALUE");
}

// Seconds times 1000 used to overflow, and TOML's inf and nan passed as a retry factor
// (found by fuzz/workflow.cc).
TEST(WorkflowTest, RefusesDurationsAndFactorsOutOfRange) {
  auto problems = problemsOf(R"(name = "x"
[[steps]]
id = "a"
plugin = "hello"
timeout = 9223372036854775807
retry = { backoff = "876001h", factor = inf }
[[steps]]
id = "b"
plugin = "hello"
retry = { factor = nan }
)");
  has(problems,
      "wf.toml:5:11: step 'a': 'timeout': invalid duration '9223372036854775807': longer than "
      "100 years");
  has(problems,
      "wf.toml:6:21: step 'a': 'retry.backoff': invalid duration '876001h': longer than 100 years");
  has(problems, "wf.toml:6:41: step 'a': 'retry.factor' must be a number of at least 1");
  has(problems, "wf.toml:10:20: step 'b': 'retry.factor' must be a number of at least 1");
}

}  // namespace
}  // namespace plugboard::core

// What the engine's checks say before a run (checkModel, as `argo lint`), and the
// workflow's parameters (resolveParameters): each bad input with its file:line.
#include "tests/core/engine_harness.h"

namespace plugboard::testing {
namespace {

std::vector<std::string> problems(const core::WorkflowModel& m) {
  std::vector<std::string> out;
  for (const auto& p : core::checkModel(m)) out.push_back(p.oneLine());
  return out;
}

core::SourceRef at(int line) { return {"wf.yaml", line, 7}; }

TEST(EngineCheckTest, AGoodModelHasNoProblems) {
  auto m = workflow("main", {steps("main", {{call("a", "say", {{"message", "{{workflow.parameters.x}}"}})}}),
                             leaf("say", {"message"})});
  m.parameters.push_back(param("x", "1"));
  EXPECT_TRUE(problems(m).empty());
}

TEST(EngineCheckTest, UnknownTemplatesAreNamedWithTheirLine) {
  auto c = call("a", "nope");
  c.where = at(12);
  auto m = workflow("main", {steps("main", {{c}})});
  EXPECT_EQ(problems(m), std::vector<std::string>{"wf.yaml:12:7: step 'a': template 'nope' not found"});
  auto m2 = workflow("missing", {leaf("say")});
  EXPECT_EQ(problems(m2), std::vector<std::string>{"wf.yaml: entrypoint template 'missing' not found"});
}

TEST(EngineCheckTest, ADagCycleAndAnUnknownDependencyAreProblems) {
  auto d = dag("main", {task("a", "say", "b"), task("b", "say", "a")});
  d.where = at(3);
  auto p = problems(workflow("main", {d, leaf("say")}));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], "wf.yaml:3:7: template 'main': dependency cycle through task 'a'");
  auto d2 = dag("main", {task("a", "say", "ghost")});
  auto p2 = problems(workflow("main", {d2, leaf("say")}));
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_NE(p2[0].find("depends on unknown task 'ghost'"), std::string::npos);
}

TEST(EngineCheckTest, VariablesNoScopeGivesAreProblems) {
  auto c = call("a", "say", {{"message", "{{inputs.parameters.nope}} {{steps.ghost.outputs.result}} {{item}}"}});
  c.where = at(9);
  auto m = workflow("main", {steps("main", {{c}}), leaf("say", {"message"})});
  auto p = problems(m);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_NE(p[0].find("wf.yaml:9:7: step 'a': failed to resolve {{inputs.parameters.nope}}"), std::string::npos);
  EXPECT_NE(p[1].find("{{steps.ghost.outputs.result}}: no such step"), std::string::npos);
  EXPECT_NE(p[2].find("outside a loop"), std::string::npos);
}

TEST(EngineCheckTest, ABadWhenOrDependsExpressionIsAProblem) {
  auto c = call("a", "say");
  c.when = "1 == (2";
  auto d = task("b", "say", "a &&");
  d.depends_on = {"a"};
  auto p1 = problems(workflow("main", {steps("main", {{c}}), leaf("say")}));
  ASSERT_EQ(p1.size(), 1u);
  EXPECT_NE(p1[0].find("when '1 == (2'"), std::string::npos);
  auto p2 = problems(workflow("main", {dag("main", {task("a", "say"), d}), leaf("say")}));
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_NE(p2[0].find("depends 'a &&'"), std::string::npos);
}

TEST(EngineCheckTest, ParametersTakeGivenValuesThenDefaults) {
  auto m = workflow("say", {leaf("say")});
  m.parameters.push_back(param("a", "1"));
  m.parameters.push_back(param("b", "2"));
  auto p = core::resolveParameters(m, Json{{"b", "3"}});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, (Json{{"a", "1"}, {"b", "3"}}));
}

TEST(EngineCheckTest, AMissingUnknownOrOutOfEnumParameterIsAnError) {
  auto m = workflow("say", {leaf("say")});
  m.parameters.push_back(param("need"));
  m.parameters.back().where = at(4);
  auto missing = core::resolveParameters(m, Json::object());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(),
            "wf.yaml:4:7: parameter 'need' has no value: give it with --param need=VALUE");
  auto unknown = core::resolveParameters(m, Json{{"need", "x"}, {"other", "y"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message().find("unknown parameter 'other'"), std::string::npos);
  m.parameters.back().enum_values = {"a", "b"};
  auto bad = core::resolveParameters(m, Json{{"need", "c"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "parameter 'need': value 'c' is not one of: a, b");
}

// `dependencies` of a join become one long conjunction: it is read term by term, so a
// join of many tasks neither recurses per term nor costs more than its terms.
TEST(EngineCheckTest, AJoinOfManyTasksRuns) {
  VirtualRunEnv env(/*threads=*/false);
  TestLeaves leaves(env);
  std::vector<core::TemplateCall> tasks;
  std::string all;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    tasks.push_back(task("t" + std::to_string(i), "echo"));
    all += (all.empty() ? "" : " && ") + tasks.back().name;
  }
  tasks.push_back(task("join", "echo", all));
  auto m = workflow("main", {dag("main", tasks), leaf("echo")});
  EXPECT_TRUE(problems(m).empty());
  core::Engine engine(leaves, core::EngineOptions{}, nullptr, &env);
  auto r = engine.run(m, Json::object());
  EXPECT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
  EXPECT_EQ(r.nodes.size(), static_cast<std::size_t>(n + 2));
  EXPECT_EQ(leaves.records("echo").back().node_id, r.nodes.back().id);
}

TEST(EngineCheckTest, SourceRefAndProblemLines) {
  EXPECT_EQ((core::SourceRef{"f.yaml", 3, 5}).text(), "f.yaml:3:5");
  EXPECT_EQ((core::SourceRef{"f.yaml", 3, 0}).text(), "f.yaml:3");
  EXPECT_EQ((core::SourceRef{"f.yaml", 0, 0}).text(), "f.yaml");
  EXPECT_EQ((core::ModelProblem{{"f.yaml", 3, 5}, "", "bad"}).oneLine(), "f.yaml:3:5: bad");
}

}  // namespace
}  // namespace plugboard::testing

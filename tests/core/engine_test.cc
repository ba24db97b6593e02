// The node engine's rules, each as Argo's controller applies it (docs/decisions.md,
// "Argo's node rules"), on a virtual clock: dag, depends, steps, when, loops, outputs,
// node names and ids, status JSON.
#include "tests/core/engine_harness.h"

namespace plugboard::testing {
namespace {

using core::OutputParameterDecl;
using From = core::OutputParameterDecl::From;

TEST_F(EngineTest, DagDiamondRunsEachTaskAfterItsDependencies) {
  leaves_.plan("echo", {LeafAnswer::sleeping(Millis(1000))});
  auto r = run(workflow("diamond", {dag("diamond", {task("A", "echo"), task("B", "echo", "A"),
                                                    task("C", "echo", "A"),
                                                    task("D", "echo", "B && C")}),
                                    leaf("echo")}));
  EXPECT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
  EXPECT_EQ(leaves_.times("echo"),
            (std::vector<Millis>{Millis(0), Millis(1000), Millis(1000), Millis(2000)}));
  // Argo's names, ids and edges: the dag's children are its roots; a task is a child of
  // each task it depends on.
  EXPECT_EQ(r.nodes[0].name, "wf");
  EXPECT_EQ(r.nodes[0].id, "wf");
  EXPECT_EQ(r.nodes[0].type, core::NodeType::kDAG);
  const auto& a = node(r, "wf.A");
  EXPECT_EQ(a.display_name, "A");
  EXPECT_EQ(a.id, "wf-" + std::to_string(0xd08e7de1u));  // FNV-1a of "wf.A"
  EXPECT_EQ(a.boundary_id, "wf");
  EXPECT_EQ(r.nodes[0].children, std::vector<std::string>{a.id});
  EXPECT_EQ(a.children, (std::vector<std::string>{node(r, "wf.B").id, node(r, "wf.C").id}));
  EXPECT_EQ(node(r, "wf.B").children, std::vector<std::string>{node(r, "wf.D").id});
  EXPECT_EQ(node(r, "wf.C").children, std::vector<std::string>{node(r, "wf.D").id});
}

TEST_F(EngineTest, DependsResultsAndOmittedTasks) {
  leaves_.plan("bad", {LeafAnswer::failed()});
  auto r = run(workflow(
      "main", {dag("main", {task("A", "bad"), task("ok", "echo"),
                            task("on-fail", "echo", "A.Failed"),
                            task("needs-a", "echo", "A"),  // A.Succeeded || A.Skipped: omitted
                            task("after-omit", "echo", "needs-a.Omitted && ok.Succeeded"),
                            task("either", "echo", "A.Succeeded || ok")}),
               leaf("echo"), leaf("bad")}));
  EXPECT_EQ(phase(r, "wf.A"), "Failed");
  EXPECT_EQ(phase(r, "wf.on-fail"), "Succeeded");
  EXPECT_EQ(phase(r, "wf.needs-a"), "Omitted");
  EXPECT_EQ(node(r, "wf.needs-a").type, core::NodeType::kSkipped);
  EXPECT_EQ(node(r, "wf.needs-a").message, "omitted: depends condition not met");
  EXPECT_EQ(phase(r, "wf.after-omit"), "Succeeded");
  EXPECT_EQ(phase(r, "wf.either"), "Succeeded");
  // Only the targets (tasks nothing depends on) decide the dag's phase, each by its own
  // phase or, when omitted, its branch's: A's failure is handled by its dependents.
  EXPECT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
}

TEST_F(EngineTest, ContinueOnFailedLetsDependenciesAndTheDagSucceed) {
  leaves_.plan("bad", {LeafAnswer::failed()});
  auto a = task("A", "bad");
  a.continue_on_failed = true;
  auto r = run(workflow("main", {dag("main", {a, task("B", "echo", "A")}), leaf("echo"),
                                 leaf("bad")}));
  EXPECT_EQ(phase(r, "wf.A"), "Failed");
  EXPECT_EQ(phase(r, "wf.B"), "Succeeded");
  EXPECT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
}

TEST_F(EngineTest, AnySucceededAndAllFailedOverALoopTask) {
  leaves_.plan("flaky", {LeafAnswer::failed(), LeafAnswer::ok()});
  options_.parallel = 1;  // the items' calls in item order, so the answers are theirs
  auto loop = task("L", "flaky");
  loop.loop->kind = core::Loop::Kind::kItems;
  loop.loop->items = Json::array({1, 2});
  loop.continue_on_failed = true;
  auto r = run(workflow("main", {dag("main", {loop, task("any", "echo", "L.AnySucceeded"),
                                              task("all", "echo", "L.AllFailed")}),
                                 leaf("echo"), leaf("flaky")}));
  EXPECT_EQ(node(r, "wf.L").type, core::NodeType::kTaskGroup);
  EXPECT_EQ(phase(r, "wf.L(0:1)"), "Failed");
  EXPECT_EQ(phase(r, "wf.L(1:2)"), "Succeeded");
  EXPECT_EQ(phase(r, "wf.any"), "Succeeded");
  EXPECT_EQ(phase(r, "wf.all"), "Omitted");
}

TEST_F(EngineTest, DagTargetRunsOnlyTheTargetsAndWhatTheyNeed) {
  auto d = dag("main", {task("A", "echo"), task("B", "echo", "A"), task("C", "echo")});
  d.dag_target = "B";
  auto r = run(workflow("main", {d, leaf("echo")}));
  EXPECT_EQ(r.phase, NodePhase::kSucceeded);
  EXPECT_TRUE(has(r, "wf.B"));
  EXPECT_FALSE(has(r, "wf.C"));
}

TEST_F(EngineTest, FailFastStopsStartingTasksAfterAFailure) {
  leaves_.plan("bad", {LeafAnswer::failed()});
  leaves_.plan("slow", {LeafAnswer::sleeping(Millis(5000))});
  auto tasks = std::vector<core::TemplateCall>{task("A", "bad"), task("S", "slow"),
                                               task("after-s", "echo", "S")};
  auto r = run(workflow("main", {dag("main", tasks), leaf("echo"), leaf("bad"), leaf("slow")}));
  EXPECT_EQ(r.phase, NodePhase::kFailed);
  EXPECT_EQ(phase(r, "wf.S"), "Succeeded");  // a running task ends on its own
  EXPECT_FALSE(has(r, "wf.after-s"));
}

TEST_F(EngineTest, WithoutFailFastTheOtherBranchesRunToTheEnd) {
  leaves_.plan("bad", {LeafAnswer::failed()});
  leaves_.plan("slow", {LeafAnswer::sleeping(Millis(5000))});
  auto d = dag("main", {task("A", "bad"), task("S", "slow"), task("after-s", "echo", "S")});
  d.fail_fast = false;
  auto r = run(workflow("main", {d, leaf("echo"), leaf("bad"), leaf("slow")}));
  EXPECT_EQ(r.phase, NodePhase::kFailed);
  EXPECT_EQ(phase(r, "wf.after-s"), "Succeeded");
}

TEST_F(EngineTest, StepsRunGroupsInOrderAndPassOutputsOn) {
  auto say = leaf("say", {"message"}, {output("message")});
  auto r = run(workflow(
      "main", {steps("main", {{call("hello1", "say", {{"message", "hello1"}})},
                              {call("hello2a", "say",
                                    {{"message", "{{steps.hello1.outputs.parameters.message}}-a"}}),
                               call("hello2b", "say", {{"message", "b"}})}}),
               say}));
  EXPECT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
  EXPECT_EQ(outParam(node(r, "wf[1].hello2a"), "message"), "hello1-a");
  EXPECT_EQ(node(r, "wf[1].hello2a").display_name, "hello2a");
  EXPECT_EQ(node(r, "wf[0]").type, core::NodeType::kStepGroup);
  EXPECT_EQ(node(r, "wf[0]").display_name, "[0]");
  // The second group hangs below the calls of the first.
  EXPECT_EQ(node(r, "wf[0].hello1").children, std::vector<std::string>{node(r, "wf[1]").id});
  EXPECT_EQ(*node(r, "wf[0].hello1").outputs.result, "hello1");
}

TEST_F(EngineTest, AFailedStepFailsItsGroupAndTheStepsUnlessItContinues) {
  leaves_.plan("bad", {LeafAnswer::failed("exit code 3")});
  auto r = run(workflow("main", {steps("main", {{call("a", "bad")}, {call("b", "echo")}}),
                                 leaf("echo"), leaf("bad")}));
  EXPECT_EQ(r.phase, NodePhase::kFailed);
  const std::string child = node(r, "wf[0].a").id;
  EXPECT_EQ(node(r, "wf[0]").message, "child '" + child + "' failed");
  EXPECT_EQ(r.message, "child '" + child + "' failed");
  EXPECT_FALSE(has(r, "wf[1]"));

  auto go_on = call("a", "bad");
  go_on.continue_on_failed = true;
  auto r2 = run(workflow("main", {steps("main", {{go_on}, {call("b", "echo")}}), leaf("echo"),
                                  leaf("bad")}));
  EXPECT_EQ(r2.phase, NodePhase::kSucceeded);
  EXPECT_EQ(phase(r2, "wf[1].b"), "Succeeded");
}

TEST_F(EngineTest, WhenFalseSkipsAndWhenTrueRuns) {
  auto flip = leaf("flip", {}, {});
  leaves_.plan("flip", {LeafAnswer::ok({{"result", "heads"}})});
  auto heads = call("heads", "echo");
  heads.when = "{{steps.flip.outputs.result}} == heads";
  auto tails = call("tails", "echo");
  tails.when = "{{steps.flip.outputs.result}} == tails";
  auto r = run(workflow("main", {steps("main", {{call("flip", "flip")}, {heads, tails}}),
                                 leaf("echo"), flip}));
  EXPECT_EQ(r.phase, NodePhase::kSucceeded);
  EXPECT_EQ(phase(r, "wf[1].heads"), "Succeeded");
  EXPECT_EQ(phase(r, "wf[1].tails"), "Skipped");
  EXPECT_EQ(node(r, "wf[1].tails").type, core::NodeType::kSkipped);
  EXPECT_EQ(node(r, "wf[1].tails").message, "when 'heads == tails' evaluated false");
}

TEST_F(EngineTest, WithItemsNamesEachItemAsArgoDoes) {
  auto c = call("print", "say", {{"message", "{{item.os}} {{item.version}}"}});
  c.loop->kind = core::Loop::Kind::kItems;
  c.loop->items = Json::array({{{"os", "debian"}, {"version", "12"}}, {{"os", "alpine"}, {"version", "3.23"}}});
  auto r = run(workflow("main", {steps("main", {{c}}), leaf("say", {"message"})}));
  EXPECT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
  const std::string first = "wf[0].print(0:{\"os\":\"debian\",\"version\":\"12\"})";
  EXPECT_EQ(node(r, first).inputs.parameters.at(0).second, "debian 12");
  EXPECT_EQ(node(r, "wf[0].print(1:{\"os\":\"alpine\",\"version\":\"3.23\"})").display_name,
            "print(1:{\"os\":\"alpine\",\"version\":\"3.23\"})");
}

TEST_F(EngineTest, WithSequenceCountsAndFormats) {
  auto c = call("n", "say", {{"message", "{{item}}"}});
  c.loop->kind = core::Loop::Kind::kSequence;
  c.loop->start = "5";
  c.loop->end = "3";
  c.loop->format = "x%02d";
  auto d = call("m", "say", {{"message", "{{item}}"}});
  d.loop->kind = core::Loop::Kind::kSequence;
  d.loop->count = "{{workflow.parameters.n}}";
  auto m = workflow("main", {steps("main", {{c, d}}), leaf("say", {"message"})});
  m.parameters.push_back(param("n", "2"));
  auto r = run(m);
  EXPECT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
  EXPECT_TRUE(has(r, "wf[0].n(0:x05)"));
  EXPECT_TRUE(has(r, "wf[0].n(2:x03)"));
  EXPECT_TRUE(has(r, "wf[0].m(0:0)"));
  EXPECT_TRUE(has(r, "wf[0].m(1:1)"));
  EXPECT_FALSE(has(r, "wf[0].m(2:2)"));
}

TEST_F(EngineTest, WithParamLoopsOverAPreviousOutputAndAggregatesTheItems) {
  leaves_.plan("gen", {LeafAnswer::ok({{"result", "[\"a\",\"b\",\"c\"]"}})});
  auto each = call("each", "say", {{"message", "{{item}}"}});
  each.loop->kind = core::Loop::Kind::kParam;
  each.loop->param = "{{steps.gen.outputs.result}}";
  auto sum = call("sum", "say",
                  {{"message", "{{steps.each.outputs.parameters.message}}|{{steps.each.outputs.result}}"}});
  auto r = run(workflow("main", {steps("main", {{call("gen", "gen")}, {each}, {sum}}),
                                 leaf("say", {"message"}, {output("message")}), leaf("gen")}));
  EXPECT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
  EXPECT_TRUE(has(r, "wf[1].each(2:c)"));
  // The next group hangs below each item of the loop before it.
  EXPECT_EQ(node(r, "wf[1].each(0:a)").children, std::vector<std::string>{node(r, "wf[2]").id});
  EXPECT_EQ(node(r, "wf[1].each(2:c)").children, std::vector<std::string>{node(r, "wf[2]").id});
  EXPECT_EQ(node(r, "wf[1]").children.size(), 3u);
  EXPECT_EQ(node(r, "wf[2].sum").inputs.parameters.at(0).second,
            "[\"a\",\"b\",\"c\"]|[\"a\",\"b\",\"c\"]");
}

TEST_F(EngineTest, AnEmptyLoopIsSkipped) {
  auto each = call("each", "echo");
  each.loop->kind = core::Loop::Kind::kParam;
  each.loop->param = "[]";
  auto r = run(workflow("main", {steps("main", {{each}}), leaf("echo")}));
  EXPECT_EQ(r.phase, NodePhase::kSucceeded);
  EXPECT_EQ(phase(r, "wf[0].each"), "Skipped");
  EXPECT_EQ(node(r, "wf[0].each").message, "Skipped, empty params");
}

TEST_F(EngineTest, ABadWithParamErrorsTheStep) {
  auto each = call("each", "echo");
  each.loop->kind = core::Loop::Kind::kParam;
  each.loop->param = "not json";
  auto r = run(workflow("main", {steps("main", {{each}}), leaf("echo")}));
  EXPECT_EQ(r.phase, NodePhase::kFailed);
  EXPECT_EQ(phase(r, "wf[0].each"), "Error");
  EXPECT_NE(node(r, "wf[0].each").message.find("withParam value could not be parsed"),
            std::string::npos);
}

TEST_F(EngineTest, OutputParametersDefaultsGlobalsAndCompositeOutputs) {
  auto gen = leaf("gen", {}, {output("given"), output("missing"), output("v", From::kValue, "{{workflow.name}}!")});
  gen.outputs[0].global_name = "shared";
  gen.outputs[1].default_value = "fallback";
  leaves_.plan("gen", {LeafAnswer::ok({{"parameters", {{"given", "42"}}}})});
  auto main = steps("main", {{call("g", "gen")}});
  main.outputs.push_back(output("out", From::kParameter, "{{steps.g.outputs.parameters.given}}"));
  main.outputs.push_back(output("expr", From::kExpression, "steps.g.outputs.parameters.missing"));
  auto r = run(workflow("main", {main, gen}));
  ASSERT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
  const auto& g = node(r, "wf[0].g");
  EXPECT_EQ(outParam(g, "given"), "42");
  EXPECT_EQ(outParam(g, "missing"), "fallback");
  EXPECT_EQ(outParam(g, "v"), "wf!");
  EXPECT_EQ(outParam(node(r, "wf"), "out"), "42");
  EXPECT_EQ(outParam(node(r, "wf"), "expr"), "fallback");
  EXPECT_EQ(r.outputs, (Json{{"parameters", {{{"name", "shared"}, {"value", "42"}}}}}));
}

// Names with '-' are reached by index in expressions: the parameters are objects.
TEST_F(EngineTest, ExpressionsIndexParametersByName) {
  auto gen = leaf("gen", {}, {output("hello-param")});
  leaves_.plan("gen", {LeafAnswer::ok({{"parameters", {{"hello-param", "hi"}}}})});
  auto use = call("use", "say",
                  {{"message", "{{=steps.gen.outputs.parameters['hello-param'] + workflow.parameters['my-p']}}"}});
  auto go = call("go", "echo");
  go.when = "{{=inputs.parameters['should-print'] == 'true'}}";
  auto main = steps("main", {{call("gen", "gen")}, {use, go}});
  main.inputs.push_back(param("should-print", "true"));
  auto m = workflow("main", {main, gen, leaf("say", {"message"}), leaf("echo")});
  m.parameters.push_back(param("my-p", "!"));
  auto r = run(m);
  EXPECT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
  EXPECT_EQ(node(r, "wf[1].use").inputs.parameters.at(0).second, "hi!");
  EXPECT_EQ(phase(r, "wf[1].go"), "Succeeded");
}

TEST_F(EngineTest, AMissingOutputWithoutDefaultIsAnError) {
  leaves_.plan("gen", {LeafAnswer::ok({{"parameters", Json::object()}})});
  auto r = run(workflow("gen", {leaf("gen", {}, {output("x")})}));
  EXPECT_EQ(r.phase, NodePhase::kError);
  EXPECT_EQ(r.message, "outputs.parameters.x: no value and no default");
}

TEST_F(EngineTest, PluginLeavesGetTheirOriginalTemplateFilled) {
  auto m = workflow("main", {steps("main", {{call("hi", "say", {{"message", "{{workflow.parameters.who}}"}})}}),
                             leaf("say", {"message"})});
  m.parameters.push_back(param("who", "world"));
  auto r = run(m, Json{{"who", "Ada"}});
  EXPECT_EQ(r.phase, NodePhase::kSucceeded);
  auto calls = leaves_.records("say");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].filled, (Json{{"name", "say"}, {"plugin", {{"test", {{"message", "Ada"}}}}}}));
  EXPECT_EQ(calls[0].inputs, (Json{{"message", "Ada"}}));
  EXPECT_EQ(calls[0].node_id, node(r, "wf[0].hi").id);
}

// As Argo's controller writes a template into the TaskSet (workflow/common/util.go,
// ProcessArgs): each input parameter with the value the node resolved, its argument or
// else its default, the rest of the parameter as written.
TEST_F(EngineTest, APluginLeafsTemplateCarriesEachInputsResolvedValue) {
  auto say = leaf("say", {"message", "greeting"});
  say.inputs[1] = param("greeting", "Hello");
  say.original["inputs"] = {{"parameters", {{{"name", "message"}}, {{"name", "greeting"}, {"default", "Hello"}}}}};
  auto m = workflow("main", {steps("main", {{call("hi", "say", {{"message", "{{workflow.parameters.who}}"}})}}), say});
  m.parameters.push_back(param("who", "world"));
  auto r = run(m, Json{{"who", "Ada"}});
  EXPECT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
  auto calls = leaves_.records("say");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].filled["inputs"],
            Json::parse(R"({"parameters": [{"name": "message", "value": "Ada"},
                                           {"name": "greeting", "default": "Hello", "value": "Hello"}]})"));
  EXPECT_EQ(calls[0].filled["plugin"], (Json{{"test", {{"message", "Ada"}, {"greeting", "Hello"}}}}));
}

TEST_F(EngineTest, AMissingInputErrorsTheNode) {
  const auto model = workflow("main", {steps("main", {{call("hi", "say")}}), leaf("say", {"message"})});
  const auto problems = core::checkModel(model);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].message, "inputs.parameters.message of template 'say' was not supplied");
  // What the engine does with it when the check is not made first.
  auto r = run(model, Json::object(), /*checked=*/false);
  EXPECT_EQ(phase(r, "wf[0].hi"), "Error");
  EXPECT_EQ(node(r, "wf[0].hi").message, "inputs.parameters.message was not supplied");
}

TEST_F(EngineTest, CheckIsAskedOncePerAttemptNotPerPoll) {
  leaves_.plan("poll", {LeafAnswer::running(Millis(100)), LeafAnswer::ok()});
  auto r = run(workflow("poll", {leaf("poll")}));
  EXPECT_EQ(r.phase, NodePhase::kSucceeded);
  EXPECT_EQ(leaves_.checks(), 1);
  EXPECT_EQ(leaves_.records("poll").size(), 2u);
}

TEST_F(EngineTest, CheckRefusalEndsTheLeafWithoutACall) {
  leaves_.refuse("say", core::Outcome::error("no deployer runs containers here"));
  auto r = run(workflow("say", {leaf("say")}));
  EXPECT_EQ(r.phase, NodePhase::kError);
  EXPECT_EQ(r.message, "no deployer runs containers here");
  EXPECT_TRUE(leaves_.records().empty());
}

TEST_F(EngineTest, StatusJsonIsShapedAsArgosWorkflowStatus) {
  auto r = run(workflow("main", {steps("main", {{call("hi", "say", {{"message", "x"}})}}),
                                 leaf("say", {"message"}, {output("message")})}));
  const Json s = r.statusJson();
  EXPECT_EQ(s["phase"], "Succeeded");
  ASSERT_TRUE(s["nodes"].is_object());
  EXPECT_EQ(s["nodes"].size(), 3u);
  const Json& root = s["nodes"]["wf"];
  EXPECT_EQ(root["type"], "Steps");
  EXPECT_EQ(root["displayName"], "wf");
  EXPECT_EQ(root["templateName"], "main");
  const std::string hi = node(r, "wf[0].hi").id;
  const Json& leaf_json = s["nodes"][hi];
  EXPECT_EQ(leaf_json["type"], "Plugin");
  EXPECT_EQ(leaf_json["phase"], "Succeeded");
  EXPECT_EQ(leaf_json["boundaryID"], "wf");
  EXPECT_EQ(leaf_json["inputs"]["parameters"][0], (Json{{"name", "message"}, {"value", "x"}}));
  EXPECT_EQ(leaf_json["outputs"]["parameters"][0], (Json{{"name", "message"}, {"value", "x"}}));
  EXPECT_TRUE(leaf_json["startedAt"].is_string());
  EXPECT_TRUE(s["startedAt"].is_string());
  EXPECT_TRUE(s["finishedAt"].is_string());
}

TEST_F(EngineTest, WrittenStatusIsTheTextOfStatusJson) {
  // Nodes of every kind of member (children, messages, inputs, outputs, a result, an exit
  // code, a failure), text JSON escapes or leaves as it is (quotes, control characters,
  // UTF-8), ids in an order other than the nodes', and the status written one level in.
  leaves_.plan("bad", {LeafAnswer::failed("it broke\n\"badly\"")});
  leaves_.plan("flip", {LeafAnswer::ok({{"result", "h\u00e9ads\\"}, {"exitCode", "0"}})});
  auto r = run(workflow(
      "main", {steps("main", {{call("hi", "say", {{"message", "x\t\u00fc\u0001 \x7f/"}}),
                               call("b", "bad"), call("flip", "flip")},
                              {call("again", "say", {{"message", "y"}})}}),
               leaf("say", {"message"}, {output("message")}), leaf("bad"), leaf("flip")}));
  ASSERT_GE(r.nodes.size(), 5u);
  EXPECT_TRUE(std::any_of(r.nodes.begin(), r.nodes.end(), [](const core::NodeStatus& n) {
    return n.outputs.result.has_value() && n.outputs.exit_code.has_value();
  }));
  for (int level : {0, 1}) {
    std::FILE* f = std::tmpfile();
    r.writeStatusJson(f, level);
    std::rewind(f);
    std::string text;
    for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) text += static_cast<char>(c);
    std::fclose(f);
    std::string expected;
    for (char c : r.statusJson().dump(2))
      expected += c == '\n' ? "\n" + std::string(2 * level, ' ') : std::string(1, c);
    EXPECT_EQ(text, expected) << "level " << level;
  }
  r.nodes.clear();
  std::FILE* f = std::tmpfile();
  r.writeStatusJson(f);
  std::rewind(f);
  std::string text;
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) text += static_cast<char>(c);
  std::fclose(f);
  EXPECT_EQ(text, r.statusJson().dump(2));
}

TEST_F(EngineTest, GenerateNameGetsASuffixAndTheUidIsAUuid) {
  auto m = workflow("say", {leaf("say")});
  m.name = "hello-";
  m.generate_name = true;
  auto r = run(m);
  EXPECT_EQ(r.workflow.size(), 11u);
  EXPECT_EQ(r.workflow.rfind("hello-", 0), 0u);
  EXPECT_EQ(r.nodes[0].id, r.workflow);
  EXPECT_EQ(r.uid.size(), 36u);
}

}  // namespace
}  // namespace plugboard::testing

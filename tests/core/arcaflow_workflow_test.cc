// The Arcaflow workflow front end (core/frontends/arcaflow_workflow.h): reading, problems
// with their places, the order of steps, the input check, the model.
#include "core/frontends/arcaflow_workflow.h"

#include <gtest/gtest.h>

#include "tests/support/files.h"

namespace plugboard::core {
namespace {

constexpr const char* kBasic = R"(version: v0.2.0
input:
  root: RootObject
  objects:
    RootObject:
      id: RootObject
      properties:
        name:
          type:
            type_id: string
            min: 1
        count:
          required: false
          type:
            type_id: integer
            max: 10
steps:
  first:
    plugin:
      src: quay.io/arcalot/arcaflow-plugin-example:0.5.1
      deployment_type: image
    input:
      name: !expr $.input.name
  second:
    plugin:
      src: quay.io/arcalot/arcaflow-plugin-example:0.5.1
      deployment_type: image
    step: hello
    input:
      name: !expr $.steps.first.outputs.success.message
      n: 3
      f: 1.5
      quoted: "3"
  third:
    plugin:
      src: arcaflow-plugin-metadata
      deployment_type: python
    input: {}
    wait_for: !expr $.steps.second.outputs
outputs:
  success:
    message: !expr $.steps.second.outputs.success.message
)";

std::string problemsOf(const ArcaflowLoad& load) {
  std::string out;
  for (const auto& p : load.problems) out += p.oneLine() + "\n";
  return out;
}

// Replaces the first `from` of kBasic by `to`.
std::string basicWith(const std::string& from, const std::string& to) {
  std::string text = kBasic;
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(ArcaflowWorkflowTest, ReadsStepsTheirOrderAndTypes) {
  const auto load = readArcaflowWorkflow(kBasic, "wf.yaml");
  ASSERT_TRUE(load.ok()) << problemsOf(load);
  const auto& wf = *load.workflow;
  ASSERT_EQ(wf.steps.size(), 3u);
  EXPECT_EQ(wf.steps[0].id, "first");
  EXPECT_TRUE(wf.steps[0].depends_on.empty());
  EXPECT_EQ(wf.steps[1].depends_on, std::vector<std::string>{"first"});
  EXPECT_EQ(wf.steps[2].depends_on, std::vector<std::string>{"second"});  // wait_for
  EXPECT_EQ(wf.steps[1].step, "hello");
  EXPECT_EQ(wf.steps[2].deployment_type, "python");
  EXPECT_TRUE(wf.steps[1].input["n"].is_number_integer());
  EXPECT_TRUE(wf.steps[1].input["f"].is_number_float());
  EXPECT_EQ(wf.steps[1].input["quoted"], "3");
  EXPECT_EQ(arcaflowTag(wf.steps[1].input["name"]), "!expr");
  EXPECT_EQ(wf.steps[1].input["name"]["expr"], "$.steps.first.outputs.success.message");
  EXPECT_EQ(wf.steps[1].input["name"]["line"], 30);
  ASSERT_EQ(wf.outputs.size(), 1u);
  EXPECT_EQ(wf.outputs_depend_on[0], std::vector<std::string>{"second"});
}

TEST(ArcaflowWorkflowTest, IsOneDagOfTheModel) {
  const auto load = readArcaflowWorkflow(kBasic, "wf.yaml");
  ASSERT_TRUE(load.ok()) << problemsOf(load);
  const WorkflowModel model = arcaflowModel(*load.workflow);
  EXPECT_EQ(model.front_end, "arcaflow");
  const Template* main = model.find(model.entrypoint);
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->kind, Template::Kind::kDag);
  ASSERT_EQ(main->tasks.size(), 3u);
  // Waits for "first" to end, whatever its output (the values decide whether it runs).
  EXPECT_EQ(main->tasks[1].depends,
            "(first.Succeeded || first.Failed || first.Errored || first.Skipped || "
            "first.Omitted)");
  EXPECT_EQ(main->tasks[1].depends_on, std::vector<std::string>{"first"});
  const Template* second = model.find("second");
  ASSERT_NE(second, nullptr);
  // An image is the plugin its last path component names, its tag the version.
  EXPECT_EQ(second->plugin.key, "arcaflow-plugin-example");
  EXPECT_EQ(second->plugin.version, "0.5.1");
  EXPECT_EQ(second->plugin.rpc, "arcaflow.hello");
  EXPECT_EQ(model.find("first")->plugin.rpc, "template.execute");
  EXPECT_EQ(second->plugin.deployer, "atp");
}

TEST(ArcaflowWorkflowTest, NamesTheImagesPlugin) {
  auto p = arcaflowImagePlugin("quay.io/arcalot/arcaflow-plugin-example:v0.5.1");
  EXPECT_EQ(p.name, "arcaflow-plugin-example");
  EXPECT_EQ(p.version, "0.5.1");
  p = arcaflowImagePlugin("localhost/Test/My+Plugin:latest");
  EXPECT_EQ(p.name, "my-plugin");
  EXPECT_EQ(p.version, "");
  p = arcaflowImagePlugin("registry:5000/x/_odd@sha256:abcd");
  EXPECT_EQ(p.name, "odd");
  EXPECT_EQ(p.version, "");
}

TEST(ArcaflowWorkflowTest, TellsItsFilesFromArgoOnes) {
  EXPECT_TRUE(looksLikeArcaflow(kBasic));
  EXPECT_FALSE(looksLikeArcaflow("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\n"));
  EXPECT_FALSE(looksLikeArcaflow("version: v0.2.0\nkind: Workflow\n"));
  EXPECT_FALSE(looksLikeArcaflow("[1, 2"));
  EXPECT_FALSE(looksLikeArcaflow("- a\n"));
}

TEST(ArcaflowWorkflowTest, RefusesAnotherVersion) {
  for (const char* v : {"v0.1.0", "0.2.0", "v0.2.1"}) {
    const auto load = readArcaflowWorkflow(basicWith("v0.2.0", v), "wf.yaml");
    EXPECT_EQ(problemsOf(load),
              "wf.yaml:1:10: version '" + std::string(v) + "' is not supported (only v0.2.0)\n");
  }
}

TEST(ArcaflowWorkflowTest, RefusesUnknownFieldsByName) {
  auto load = readArcaflowWorkflow(basicWith("    step: hello\n", "    step: hello\n    retries: 3\n"),
                                   "wf.yaml");
  EXPECT_NE(problemsOf(load).find("wf.yaml:29:5: step 'second': unknown field 'retries'"),
            std::string::npos)
      << problemsOf(load);
  load = readArcaflowWorkflow(std::string(kBasic) + "extra: 1\n", "wf.yaml");
  EXPECT_NE(problemsOf(load).find("unknown field 'extra'"), std::string::npos) << problemsOf(load);
  load = readArcaflowWorkflow(basicWith("deployment_type: image", "deployment_type: image\n      pull: always"),
                              "wf.yaml");
  EXPECT_NE(problemsOf(load).find("unknown field 'pull' ('plugin' has deployment_type, src)"),
            std::string::npos)
      << problemsOf(load);
}

TEST(ArcaflowWorkflowTest, RefusesAnUnknownTag) {
  const auto load = readArcaflowWorkflow(basicWith("n: 3", "n: !env HOME"), "wf.yaml");
  EXPECT_NE(problemsOf(load).find("wf.yaml:31:10: step 'second': unknown tag '!env'"),
            std::string::npos)
      << problemsOf(load);
}

TEST(ArcaflowWorkflowTest, RefusesABadExpressionWithItsPlace) {
  const auto load =
      readArcaflowWorkflow(basicWith("!expr $.input.name", "!expr $.input.name["), "wf.yaml");
  EXPECT_NE(problemsOf(load).find("wf.yaml:23:13: step 'first': bad expression '$.input.name['"),
            std::string::npos)
      << problemsOf(load);
  const auto call =
      readArcaflowWorkflow(basicWith("!expr $.input.name", "!expr nosuch($.input.name)"), "wf.yaml");
  EXPECT_NE(problemsOf(call).find("nosuch"), std::string::npos) << problemsOf(call);
}

TEST(ArcaflowWorkflowTest, RefusesACycleAndAnUnknownStep) {
  auto load = readArcaflowWorkflow(
      basicWith("input:\n      name: !expr $.input.name",
                "input:\n      name: !expr $.steps.third.outputs.success.x"),
      "wf.yaml");
  EXPECT_NE(problemsOf(load).find("cycle: first -> third -> second -> first"), std::string::npos)
      << problemsOf(load);
  load = readArcaflowWorkflow(basicWith("$.steps.second.outputs\n", "$.steps.fourth.outputs\n"),
                              "wf.yaml");
  EXPECT_NE(problemsOf(load).find(
                "step 'third': '$.steps.fourth.outputs' reads step 'fourth', which the workflow "
                "does not have"),
            std::string::npos)
      << problemsOf(load);
}

TEST(ArcaflowWorkflowTest, ReadsTheOtherTags) {
  const auto load = readArcaflowWorkflow(
      basicWith("      n: 3\n",
                "      n: !wait-optional $.steps.first.outputs.success.n\n"
                "      m: !soft-optional $.input.count\n"
                "      d: !ordisabled $.steps.first.outputs\n"
                "      o: !oneof\n"
                "        discriminator: kind\n"
                "        one_of:\n"
                "          a: !expr $.steps.first.outputs.success\n"
                "          b: {x: 1}\n"),
      "wf.yaml");
  ASSERT_TRUE(load.ok()) << problemsOf(load);
  const Json& in = load.workflow->steps[1].input;
  EXPECT_EQ(arcaflowTag(in["n"]), "!wait-optional");
  EXPECT_EQ(arcaflowTag(in["m"]), "!soft-optional");
  EXPECT_EQ(arcaflowTag(in["d"]), "!ordisabled");
  EXPECT_EQ(in["d"]["step"], "first");
  EXPECT_EQ(arcaflowTag(in["o"]), "!oneof");
  EXPECT_EQ(in["o"]["discriminator"], "kind");
  EXPECT_EQ(arcaflowTag(in["o"]["one_of"]["a"]), "!expr");
  EXPECT_EQ(in["o"]["one_of"]["b"]["x"], 1);

  auto bad = readArcaflowWorkflow(basicWith("n: 3", "n: !ordisabled $.input.name"), "wf.yaml");
  EXPECT_NE(problemsOf(bad).find("!ordisabled needs a step's output"), std::string::npos)
      << problemsOf(bad);
  bad = readArcaflowWorkflow(basicWith("n: 3", "n: !oneof {one_of: {a: 1}}"), "wf.yaml");
  EXPECT_NE(problemsOf(bad).find("!oneof needs a non-empty string 'discriminator'"),
            std::string::npos)
      << problemsOf(bad);
}

TEST(ArcaflowWorkflowTest, ReadsForeachAndTheDeprecatedOutput) {
  const auto load = readArcaflowWorkflow(R"(version: v0.2.0
input:
  root: R
  objects:
    R:
      id: R
      properties:
        names: {type: {type_id: list, items: {type_id: string}}}
steps:
  loop:
    kind: foreach
    items: !expr 'bindConstants($.input.names, "x")'
    workflow: subworkflow.yaml
    parallelism: 2
output:
  data: !expr $.steps.loop.outputs.success.data
)",
                                         "wf.yaml");
  ASSERT_TRUE(load.ok()) << problemsOf(load);
  const auto& s = load.workflow->steps[0];
  EXPECT_EQ(s.kind, ArcaflowStep::Kind::kForeach);
  EXPECT_EQ(s.workflow, "subworkflow.yaml");
  EXPECT_EQ(s.parallelism, 2);
  EXPECT_TRUE(load.workflow->deprecated_output);
  EXPECT_EQ(load.workflow->outputs[0].first, "success");

  const auto bad = readArcaflowWorkflow(
      "version: v0.2.0\ninput: {root: R, objects: {R: {id: R, properties: {}}}}\n"
      "steps:\n  loop:\n    kind: foreach\n    items: []\n    input: {}\n"
      "outputs: {success: {}}\n",
      "wf.yaml");
  EXPECT_NE(problemsOf(bad).find("'workflow' (a sub-workflow file) is missing"), std::string::npos)
      << problemsOf(bad);
  EXPECT_NE(problemsOf(bad).find("unknown field 'input' (a foreach step has"), std::string::npos)
      << problemsOf(bad);
}

TEST(ArcaflowWorkflowTest, RefusesAStepWithoutItsPlugin) {
  const auto load = readArcaflowWorkflow(basicWith("      deployment_type: python\n", "      deployment_type: kubernetes\n"),
                                         "wf.yaml");
  EXPECT_NE(problemsOf(load).find("plugin.deployment_type 'kubernetes' is not one of image, python"),
            std::string::npos)
      << problemsOf(load);
}

TEST(ArcaflowWorkflowTest, ChecksTheInputAgainstItsScope) {
  const auto load = readArcaflowWorkflow(kBasic, "wf.yaml");
  ASSERT_TRUE(load.ok()) << problemsOf(load);
  EXPECT_TRUE(checkArcaflowInput(*load.workflow, {{"name", "x"}, {"count", 3}}).empty());
  auto bad = checkArcaflowInput(*load.workflow, {{"name", "x"}, {"count", 30}});
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].rfind("input.count", 0), 0u) << bad[0];
  bad = checkArcaflowInput(*load.workflow, {{"count", 3}});
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].find("name"), std::string::npos) << bad[0];
  bad = checkArcaflowInput(*load.workflow, {{"name", "x"}, {"other", 1}});
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].find("other"), std::string::npos) << bad[0];
}

TEST(ArcaflowWorkflowTest, RefusesAnInputThatIsNotAScope) {
  const auto load = readArcaflowWorkflow(basicWith("  root: RootObject", "  root: Nope"), "wf.yaml");
  EXPECT_NE(problemsOf(load).find("wf.yaml:3:9: input: root 'Nope' is not one of its objects"),
            std::string::npos)
      << problemsOf(load);
}

TEST(ArcaflowWorkflowTest, RefusesYamlItCannotTakeWithItsLine) {
  auto load = readArcaflowWorkflow(std::string(kBasic) + "version: v0.2.0\n", "wf.yaml");
  EXPECT_NE(problemsOf(load).find("key 'version' is given twice"), std::string::npos)
      << problemsOf(load);
  EXPECT_FALSE(load.workflow.has_value());
  load = readArcaflowWorkflow("version: v0.2.0\nsteps: [a\n", "wf.yaml");
  EXPECT_NE(problemsOf(load).find("wf.yaml:3:1: not YAML: "), std::string::npos)
      << problemsOf(load);
  load = readArcaflowWorkflow(std::string(kBasic) + "---\nversion: v0.2.0\n", "wf.yaml");
  EXPECT_NE(problemsOf(load).find("an Arcaflow workflow is one YAML document"), std::string::npos)
      << problemsOf(load);
  // Aliases of aliases: refused at a million values, not expanded.
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 8; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) bomb += std::string(j ? ", " : "") + "*a" + std::to_string(i - 1);
    bomb += "]\n";
  }
  load = readArcaflowWorkflow(basicWith("    input: {}\n", "    input: {}\n    deploy:\n" + [&] {
    std::string indented;
    for (size_t at = 0, next; at < bomb.size(); at = next + 1) {
      next = bomb.find('\n', at);
      indented += "      " + bomb.substr(at, next - at + 1);
    }
    return indented;
  }()), "wf.yaml");
  EXPECT_NE(problemsOf(load).find("more than a million values"), std::string::npos)
      << problemsOf(load).substr(0, 300);
}

TEST(ArcaflowWorkflowTest, TypesYamlsOwnTagsAndKeepsStrText) {
  const auto load = readArcaflowWorkflow(
      basicWith("      quoted: \"3\"\n", "      quoted: !!str 3\n      typed: !!int 4\n"), "wf.yaml");
  ASSERT_TRUE(load.ok()) << problemsOf(load);
  EXPECT_EQ(load.workflow->steps[1].input["quoted"], "3");
  EXPECT_EQ(load.workflow->steps[1].input["typed"], 4);
}

TEST(ArcaflowWorkflowTest, ChecksTheChosenOneOfBranchOfTheInput) {
  const std::string scope = R"(  root: RootObject
  objects:
    RootObject:
      id: RootObject
      properties:
        who:
          type:
            type_id: one_of_string
            discriminator_field_name: kind
            types:
              nick: {type_id: ref, id: Nick}
              full: {type_id: ref, id: Full}
    Nick:
      id: Nick
      properties:
        nick: {type: {type_id: string, pattern: "^[a-zA-Z]+$"}}
    Full:
      id: Full
      properties:
        first: {type: {type_id: string}}
        last: {type: {type_id: string}}
)";
  std::string text = kBasic;
  const size_t from = text.find("  root: RootObject");
  text.replace(from, text.find("steps:") - from, scope);
  text.replace(text.find("$.input.name"), 12, "$.input.who");
  const auto load = readArcaflowWorkflow(text, "wf.yaml");
  ASSERT_TRUE(load.ok()) << problemsOf(load);
  const Json nick = {{"who", {{"kind", "nick"}, {"nick", "Arca"}}}};
  EXPECT_TRUE(checkArcaflowInput(*load.workflow, nick).empty());
  auto bad = checkArcaflowInput(*load.workflow, {{"who", {{"kind", "nick"}, {"nick", "123"}}}});
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].rfind("input.who.nick: does not match the pattern", 0), 0u) << bad[0];
  bad = checkArcaflowInput(*load.workflow, {{"who", {{"kind", "full"}, {"first", "Arca"}}}});
  ASSERT_EQ(bad.size(), 1u);  // `last` says nothing of required: it is required
  EXPECT_EQ(bad[0], "input.who: missing required member 'last'");
  bad = checkArcaflowInput(*load.workflow, {{"who", {{"nick", "Arca"}}}});
  ASSERT_FALSE(bad.empty());
  EXPECT_NE(bad[0].find("'kind'"), std::string::npos) << bad[0];
}

// A ref in the namespace of a foreach step's items names an object of the sub-workflow's
// input scope (the engine's workflow/executor.go BuildNamespaces), as bind-constants of
// arcaflow-workflows writes it: the input is checked against that object, refs inside it
// reaching the sub-workflow's own objects.
TEST(ArcaflowWorkflowTest, ChecksANamespacedRefAgainstTheForeachSubWorkflowsInput) {
  testing::TempDir dir;
  dir.write("sub.yaml", R"(version: v0.2.0
input:
  root: Sub
  objects:
    Sub:
      id: Sub
      properties:
        item: {type: {type_id: ref, id: Item}}
    Item:
      id: Item
      properties:
        loop_id: {type: {type_id: integer}}
steps:
  s:
    plugin: {src: quay.io/x:1, deployment_type: image}
    input: {}
outputs:
  success: {n: !expr $.input.item.loop_id}
)");
  const std::string wf = dir.write("wf.yaml", R"(version: v0.2.0
input:
  root: R
  objects:
    R:
      id: R
      properties:
        iterations:
          type:
            type_id: list
            items: {type_id: ref, id: Sub, namespace: $.steps.loop.execute.inputs.items}
        other:
          required: false
          type: {type_id: ref, id: Item, namespace: $.steps.nope.execute.inputs.items}
steps:
  loop:
    kind: foreach
    items: !expr $.input.iterations
    workflow: sub.yaml
outputs:
  success: {d: !expr $.steps.loop.outputs.success.data}
)");
  const auto load = loadArcaflowWorkflow(wf);
  ASSERT_TRUE(load.ok()) << problemsOf(load);
  EXPECT_TRUE(checkArcaflowInput(*load.workflow,
                                 Json::parse(R"({"iterations": [{"item": {"loop_id": 1}}]})"))
                  .empty());
  auto bad = checkArcaflowInput(*load.workflow,
                                Json::parse(R"({"iterations": [{"item": {"loop_id": "x"}}]})"));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].rfind("input.iterations[0].item.loop_id", 0), 0u) << bad[0];
  bad = checkArcaflowInput(*load.workflow,
                           Json::parse(R"({"iterations": [{"item": {"loop_id": 1}, "extra": 1}]})"));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0], "input.iterations[0]: unknown member 'extra'");
  // A namespace naming no foreach step is left to the engine's reference check: unchecked.
  EXPECT_TRUE(checkArcaflowInput(*load.workflow, Json::parse(R"({"iterations": [], "other": 5})")).empty());
}

}  // namespace
}  // namespace plugboard::core

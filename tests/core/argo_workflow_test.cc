// Argo Workflow YAML read into the workflow model (core/frontends/argo_workflow.h): what
// each Argo field becomes, and each bad input refused with the line it is on. The
// workflows are our own, written in Argo's format.
#include "core/frontends/argo_workflow.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/files.h"

namespace plugboard::core {
namespace {

using testing::TempDir;

// `text` with the first `find` replaced by `replace` (any length: YAML, not a binary).
std::string edited(std::string text, std::string_view find, std::string_view replace) {
  auto pos = text.find(find);
  if (pos == std::string::npos) throw std::runtime_error(std::string(find) + " not found");
  return text.replace(pos, find.size(), replace);
}

// "line:column subject: message" of every problem, for failure output and matching.
std::string problems(const ArgoWorkflowLoad& load) {
  std::string out;
  for (const auto& p : load.problems) {
    out += p.where.file + ":" + std::to_string(p.where.line) + ":" +
           std::to_string(p.where.column) + " " + p.subject + ": " + p.message + "\n";
  }
  return out;
}

WorkflowModel ok(std::string_view yaml, const ArgoReadOptions& options = {}) {
  ArgoWorkflowLoad load = readArgoWorkflow(yaml, "wf.yaml", options);
  EXPECT_TRUE(load.problems.empty()) << problems(load);
  EXPECT_TRUE(load.model.has_value());
  return load.model.value_or(WorkflowModel{});
}

// The one problem `yaml` has: it is on `line` of wf.yaml and its message contains `text`.
void refused(std::string_view yaml, int line, std::string_view text,
             const ArgoReadOptions& options = {}) {
  ArgoWorkflowLoad load = readArgoWorkflow(yaml, "wf.yaml", options);
  ASSERT_EQ(load.problems.size(), 1u) << problems(load);
  const ModelProblem& p = load.problems[0];
  EXPECT_EQ(p.where.file, "wf.yaml");
  EXPECT_EQ(p.where.line, line) << problems(load);
  EXPECT_NE((p.subject + ": " + p.message).find(text), std::string::npos) << problems(load);
  EXPECT_FALSE(load.ok());
}

const Template& find(const WorkflowModel& m, const std::string& name) {
  for (const auto& t : m.templates) {
    if (t.name == name) return t;
  }
  ADD_FAILURE() << "no template " << name;
  static const Template none;
  return none;
}

constexpr std::string_view kHello = R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: hello-
  labels:
    team: tools
  annotations:
    workflows.argoproj.io/description: Says hello.
spec:
  entrypoint: main
  serviceAccountName: runner
  podGC:
    strategy: OnPodSuccess
  arguments:
    parameters:
    - name: who
      value: world
    - name: mood
      value: calm
      enum: [calm, loud]
  templates:
  - name: main
    container:
      image: busybox
      command: [echo]
      args: ["hello {{workflow.parameters.who}}", 5]
      env:
      - name: GREETING
        value: hi
      workingDir: /tmp
      resources:
        limits: {memory: 32Mi}
)";

TEST(ArgoWorkflow, ReadsAContainerWorkflowWithItsMetadataAndArguments) {
  WorkflowModel m = ok(kHello);
  EXPECT_EQ(m.name, "hello-");
  EXPECT_TRUE(m.generate_name);
  EXPECT_EQ(m.front_end, "argo");
  EXPECT_EQ(m.description, "Says hello.");
  EXPECT_EQ(m.labels, Json({{"team", "tools"}}));
  EXPECT_EQ(m.entrypoint, "main");
  ASSERT_EQ(m.parameters.size(), 2u);
  // spec.arguments give defaults that --param overrides, as `argo submit -p` does.
  EXPECT_FALSE(m.parameters[0].value.has_value());
  EXPECT_EQ(m.parameters[0].default_value, Json("world"));
  EXPECT_EQ(m.parameters[1].enum_values, (std::vector<std::string>{"calm", "loud"}));
  EXPECT_EQ(m.parameters[0].where.line, 16);
  ASSERT_EQ(m.templates.size(), 1u);
  const Template& t = m.templates[0];
  EXPECT_EQ(t.kind, Template::Kind::kContainer);
  EXPECT_EQ(t.container->image, "busybox");
  EXPECT_EQ(t.container->command, std::vector<std::string>{"echo"});
  EXPECT_EQ(t.container->args, (std::vector<std::string>{"hello {{workflow.parameters.who}}", "5"}));
  ASSERT_EQ(t.container->env.size(), 1u);
  EXPECT_EQ(t.container->env[0], (std::pair<std::string, std::string>{"GREETING", "hi"}));
  EXPECT_EQ(t.container->working_dir, "/tmp");
  EXPECT_EQ(t.where.file, "wf.yaml");
  EXPECT_EQ(t.where.line, 22);
  EXPECT_EQ(t.where.column, 5);
  EXPECT_EQ(t.original["container"]["args"], Json::array({"hello {{workflow.parameters.who}}", 5}));
}

TEST(ArgoWorkflow, ReadsAPluginTemplateWithItsBodyAndSuppliedOutputs) {
  WorkflowModel m = ok(R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: plug
spec:
  entrypoint: main
  parallelism: 6
  activeDeadlineSeconds: 300
  templates:
  - name: main
    inputs:
      parameters:
      - name: text
        default: Hello
    plugin:
      hello:
        text: "{{inputs.parameters.text}}"
        count: 3
        loud: true
    outputs:
      parameters:
      - name: reply
        valueFrom:
          supplied: {}
    timeout: 30s
)");
  EXPECT_EQ(m.name, "plug");
  EXPECT_FALSE(m.generate_name);
  EXPECT_EQ(m.parallelism, 6);
  EXPECT_EQ(m.active_deadline, Millis(300000));
  const Template& t = m.templates.at(0);
  EXPECT_EQ(t.kind, Template::Kind::kPlugin);
  EXPECT_EQ(t.plugin.key, "hello");
  EXPECT_TRUE(t.plugin.poll);
  EXPECT_EQ(t.plugin.args,
            Json({{"text", "{{inputs.parameters.text}}"}, {"count", 3}, {"loud", true}}));
  ASSERT_EQ(t.inputs.size(), 1u);
  EXPECT_EQ(t.inputs[0].default_value, Json("Hello"));
  ASSERT_EQ(t.outputs.size(), 1u);
  EXPECT_EQ(t.outputs[0].from, OutputParameterDecl::From::kSupplied);
  EXPECT_EQ(t.timeout, "30s");
  // What Argo's controller writes into the TaskSet for the agent: the whole template.
  EXPECT_EQ(t.original["name"], "main");
  EXPECT_EQ(t.original["plugin"]["hello"]["count"], 3);
  EXPECT_EQ(t.original["outputs"]["parameters"][0]["valueFrom"],
            Json({{"supplied", Json::object()}}));
  EXPECT_EQ(t.original["timeout"], "30s");
}

constexpr std::string_view kSteps = R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: steps-
spec:
  entrypoint: main
  onExit: bye
  templates:
  - name: main
    parallelism: 2
    steps:
    - - name: first
        template: echo
        arguments:
          parameters:
          - name: msg
            value: 1
    - - name: items
        template: echo
        arguments:
          parameters: [{name: msg, value: "{{item}}"}]
        withItems: [a, 2, true]
      - name: maps
        template: echo
        arguments:
          parameters: [{name: msg, value: "{{item.os}}"}]
        withItems:
        - {os: debian, version: 12}
        when: "{{steps.first.outputs.result}} == 1"
        continueOn:
          failed: true
      - name: seq
        template: echo
        withSequence: {count: "3", start: "1", format: "n%02d"}
        arguments:
          parameters: [{name: msg, value: "{{item}}"}]
      - name: param
        template: echo
        withParam: "{{steps.first.outputs.result}}"
        arguments:
          parameters: [{name: msg, value: "{{item}}"}]
        onExit: bye
      - name: hooked
        template: echo
        arguments:
          parameters: [{name: msg, value: x}]
        hooks:
          exit:
            template: echo
            arguments:
              parameters: [{name: msg, value: "{{steps.hooked.outputs.result}}"}]
  - name: echo
    inputs:
      parameters: [{name: msg}]
    script:
      image: python:alpine3.23
      command: [python]
      source: |
        print("{{inputs.parameters.msg}}")
    retryStrategy:
      limit: "3"
      retryPolicy: Always
      backoff: {duration: "1", factor: 2, maxDuration: 1m, cap: 10s}
  - name: bye
    suspend:
      duration: "5"
)";

TEST(ArgoWorkflow, ReadsStepsLoopsConditionsAndExitHandlers) {
  WorkflowModel m = ok(kSteps);
  EXPECT_EQ(m.on_exit, "bye");
  const Template& main = find(m, "main");
  EXPECT_EQ(main.kind, Template::Kind::kSteps);
  EXPECT_EQ(main.parallelism, 2);
  ASSERT_EQ(main.steps.size(), 2u);
  ASSERT_EQ(main.steps[0].size(), 1u);
  ASSERT_EQ(main.steps[1].size(), 5u);
  const TemplateCall& first = main.steps[0][0];
  EXPECT_EQ(first.template_name, "echo");
  ASSERT_EQ(first.arguments.size(), 1u);
  EXPECT_EQ(first.arguments[0], (std::pair<std::string, Json>{"msg", "1"}));  // AnyString
  EXPECT_EQ(first.loop->kind, Loop::Kind::kNone);
  const TemplateCall& items = main.steps[1][0];
  EXPECT_EQ(items.loop->kind, Loop::Kind::kItems);
  EXPECT_EQ(items.loop->items, Json::array({"a", 2, true}));
  EXPECT_EQ(items.loop->where.line, 22);
  const TemplateCall& maps = main.steps[1][1];
  EXPECT_EQ(maps.loop->items, Json::array({{{"os", "debian"}, {"version", 12}}}));
  EXPECT_EQ(maps.when, "{{steps.first.outputs.result}} == 1");
  EXPECT_TRUE(maps.continue_on_failed);
  EXPECT_FALSE(maps.continue_on_error);
  const TemplateCall& seq = main.steps[1][2];
  EXPECT_EQ(seq.loop->kind, Loop::Kind::kSequence);
  EXPECT_EQ(seq.loop->count, "3");
  EXPECT_EQ(seq.loop->start, "1");
  EXPECT_EQ(seq.loop->format, "n%02d");
  const TemplateCall& param = main.steps[1][3];
  EXPECT_EQ(param.loop->kind, Loop::Kind::kParam);
  EXPECT_EQ(param.loop->param, "{{steps.first.outputs.result}}");
  EXPECT_EQ(param.on_exit, "bye");
  const TemplateCall& hooked = main.steps[1][4];
  EXPECT_EQ(hooked.on_exit, "echo");
  ASSERT_EQ(hooked.on_exit_arguments.size(), 1u);
  EXPECT_EQ(hooked.on_exit_arguments[0].second, "{{steps.hooked.outputs.result}}");

  const Template& echo = find(m, "echo");
  EXPECT_EQ(echo.kind, Template::Kind::kScript);
  EXPECT_EQ(echo.container->source, "print(\"{{inputs.parameters.msg}}\")\n");
  ASSERT_TRUE(echo.retry.has_value());
  EXPECT_EQ(echo.retry->limit, "3");
  EXPECT_EQ(echo.retry->policy, RetryStrategy::Policy::kAlways);
  EXPECT_EQ(echo.retry->backoff, Millis(1000));
  EXPECT_EQ(echo.retry->factor, 2.0);
  EXPECT_EQ(echo.retry->max_total, Millis(60000));
  EXPECT_EQ(echo.retry->max_backoff, Millis(10000));
  const Template& bye = find(m, "bye");
  EXPECT_EQ(bye.kind, Template::Kind::kSuspend);
  EXPECT_EQ(bye.suspend_for, "5");
}

constexpr std::string_view kDag = R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: dag-
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      failFast: false
      target: D
      tasks:
      - name: A
        template: leaf
      - name: B
        template: leaf
        depends: A
      - name: C
        template: leaf
        depends: A && B
      - name: D
        template: leaf
        depends: "(B.Succeeded || C.Failed) && !A.Skipped"
    outputs:
      parameters:
      - name: out
        valueFrom:
          parameter: "{{tasks.D.outputs.parameters.out}}"
        globalName: result
      - name: both
        valueFrom:
          expression: "tasks.B.outputs.result + tasks.C.outputs.result"
  - name: leaf
    activeDeadlineSeconds: 20
    container:
      image: alpine:3.23
      command: [sh, -c, "echo hi > /tmp/out"]
    outputs:
      parameters:
      - name: out
        valueFrom:
          path: /tmp/out
          default: none
)";

TEST(ArgoWorkflow, ReadsADagWithDependenciesAndDepends) {
  WorkflowModel m = ok(kDag);
  const Template& main = find(m, "main");
  EXPECT_EQ(main.kind, Template::Kind::kDag);
  EXPECT_FALSE(main.fail_fast);
  EXPECT_EQ(main.dag_target, "D");
  ASSERT_EQ(main.tasks.size(), 4u);
  EXPECT_EQ(main.tasks[0].depends, "");
  EXPECT_TRUE(main.tasks[0].depends_on.empty());
  EXPECT_EQ(main.tasks[2].depends, "A && B");
  EXPECT_EQ(main.tasks[2].depends_on, (std::vector<std::string>{"A", "B"}));
  // `dependencies` (all must succeed) is the depends expression "A && B".
  std::string with_list =
      edited(edited(edited(std::string(kDag), "depends: A\n", "dependencies: [A]\n"),
                    "depends: A && B", "dependencies: [A, B]"),
             "        depends: \"(B.Succeeded || C.Failed) && !A.Skipped\"\n", "");
  WorkflowModel listed_model = ok(with_list);
  const Template& listed = listed_model.templates.at(0);
  EXPECT_EQ(listed.tasks[1].depends, "A");
  EXPECT_EQ(listed.tasks[2].depends, "A && B");
  EXPECT_EQ(listed.tasks[2].depends_on, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(main.tasks[3].depends, "(B.Succeeded || C.Failed) && !A.Skipped");
  EXPECT_EQ(main.tasks[3].depends_on, (std::vector<std::string>{"B", "C", "A"}));
  EXPECT_EQ(main.tasks[3].where.line, 21);
  ASSERT_EQ(main.outputs.size(), 2u);
  EXPECT_EQ(main.outputs[0].from, OutputParameterDecl::From::kParameter);
  EXPECT_EQ(main.outputs[0].source, "{{tasks.D.outputs.parameters.out}}");
  EXPECT_EQ(main.outputs[0].global_name, "result");
  EXPECT_EQ(main.outputs[1].from, OutputParameterDecl::From::kExpression);
  const Template& leaf = find(m, "leaf");
  EXPECT_EQ(leaf.active_deadline, Millis(20000));
  ASSERT_EQ(leaf.outputs.size(), 1u);
  EXPECT_EQ(leaf.outputs[0].from, OutputParameterDecl::From::kPath);
  EXPECT_EQ(leaf.outputs[0].source, "/tmp/out");
  EXPECT_EQ(leaf.outputs[0].default_value, Json("none"));
}

TEST(ArgoWorkflow, ReadsInlineTemplatesAsTemplatesOfTheirOwn) {
  std::string wf = R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: inline-}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - name: a
        inline:
          steps:
          - - name: b
              inline:
                container: {image: busybox, command: [echo, hi]}
)";
  WorkflowModel m = ok(wf);
  ASSERT_EQ(m.templates.size(), 3u);
  EXPECT_EQ(m.templates[0].tasks.at(0).template_name, "main.a");
  const Template& a = find(m, "main.a");
  EXPECT_EQ(a.kind, Template::Kind::kSteps);
  EXPECT_EQ(a.where.line, 12);
  EXPECT_EQ(a.steps.at(0).at(0).template_name, "main.a.b");
  EXPECT_EQ(find(m, "main.a.b").container->image, "busybox");
  refused(edited(wf, "      - name: a\n", "      - name: a\n        template: main\n"), 10,
          "inline, template and templateRef are exclusive");
  refused(edited(wf, "{image: busybox, command: [echo, hi]}", "{image: busybox, volumeMounts: []}"),
          15, "template 'main.a.b': container.volumeMounts: not supported");
}

TEST(ArgoWorkflow, ReadsWorkflowLevelExecutorPluginsAsManifests) {
  WorkflowModel m = ok(R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: wfp-
spec:
  entrypoint: main
  executorPlugins:
  - metadata:
      name: greeter
    spec:
      sidecar:
        container:
          name: greeter
          image: python:alpine3.23
          ports: [{containerPort: 4356}]
  templates:
  - name: main
    plugin:
      greeter: {}
)");
  ASSERT_EQ(m.executor_plugins.size(), 1u);
  const Json& p = m.executor_plugins[0];
  EXPECT_EQ(p["kind"], "ExecutorPlugin");
  EXPECT_EQ(p["apiVersion"], "argoproj.io/v1alpha1");
  EXPECT_EQ(p["metadata"]["name"], "greeter");
  EXPECT_EQ(p["spec"]["sidecar"]["container"]["image"], "python:alpine3.23");
  EXPECT_EQ(m.templates.at(0).plugin.args, Json::object());
}

constexpr std::string_view kLibrary = R"(apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata:
  name: lib
spec:
  templates:
  - name: greet
    steps:
    - - name: inner
        template: say
  - name: say
    container: {image: busybox, command: [echo, hi]}
  - name: unused
    container: {image: busybox}
)";

TEST(ArgoWorkflow, ResolvesTemplateRefsFromADirectoryWithTheTemplatesTheyCall) {
  TempDir dir;
  dir.write("lib.yaml", kLibrary);
  dir.write("notes.txt", "not yaml: [");
  ArgoReadOptions options;
  options.templates_dir = dir.path();
  WorkflowModel m = ok(R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: ref-}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - name: a
        templateRef: {name: lib, template: greet}
)",
                       options);
  ASSERT_EQ(m.templates.size(), 3u);
  EXPECT_EQ(m.templates[0].tasks.at(0).template_name, "lib/greet");
  const Template& greet = find(m, "lib/greet");
  EXPECT_EQ(greet.where.file, (dir / "lib.yaml").string());
  EXPECT_EQ(greet.where.line, 7);
  EXPECT_EQ(greet.steps.at(0).at(0).template_name, "lib/say");
  EXPECT_EQ(find(m, "lib/say").container->image, "busybox");
}

TEST(ArgoWorkflow, RefusesATemplateRefThatIsNotThere) {
  TempDir dir;
  dir.write("lib.yaml", kLibrary);
  ArgoReadOptions options;
  options.templates_dir = dir.path();
  std::string wf = R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: ref-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: a
        templateRef: {name: lib, template: nope}
)";
  refused(wf, 10, "template reference lib.nope not found: WorkflowTemplate 'lib'", options);
  refused(edited(wf, "name: lib,", "name: other,"), 10, "no WorkflowTemplate named 'other'",
          options);
  refused(wf, 10, "no templates directory was given");
}

TEST(ArgoWorkflow, ReadsAWorkflowThatRefersToAWholeWorkflowTemplate) {
  TempDir dir;
  dir.write("lib.yaml", std::string(kLibrary) + R"(  entrypoint: greet
  arguments:
    parameters:
    - {name: who, value: world}
    - {name: mood, value: calm}
)");
  ArgoReadOptions options;
  options.templates_dir = dir.path();
  std::string wf = R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: whole-}
spec:
  arguments:
    parameters:
    - {name: who, value: you}
  workflowTemplateRef:
    name: lib
)";
  WorkflowModel m = ok(wf, options);
  EXPECT_EQ(m.entrypoint, "greet");
  EXPECT_EQ(m.templates.size(), 3u);
  EXPECT_EQ(find(m, "say").where.file, (dir / "lib.yaml").string());
  ASSERT_EQ(m.parameters.size(), 2u);
  EXPECT_EQ(m.parameters[0].default_value, Json("you"));  // the workflow's value wins
  EXPECT_EQ(m.parameters[1].default_value, Json("calm"));
  // Argo's validate: a workflow referring to a WorkflowTemplate has no templates.
  refused(edited(wf, "  workflowTemplateRef:", "  templates: []\n  workflowTemplateRef:"), 8,
          "spec.templates is invalid when the workflow refers to a WorkflowTemplate", options);
  refused(edited(wf, "name: lib", "name: other"), 9,
          "spec.workflowTemplateRef 'other' not found: no WorkflowTemplate named 'other'", options);
  refused(edited(wf, "name: lib", "name: lib\n    clusterScope: true"), 9,
          "no ClusterWorkflowTemplate named 'lib'", options);
}

TEST(ArgoWorkflow, ReadsAWorkflowTemplateFromTheEntryPointGiven) {
  ArgoReadOptions options;
  options.entrypoint = "say";
  WorkflowModel m = ok(kLibrary, options);
  EXPECT_EQ(m.name, "lib");
  EXPECT_EQ(m.entrypoint, "say");
  EXPECT_EQ(m.templates.size(), 3u);
  refused(kLibrary, 6, "a WorkflowTemplate needs an entry point");
  options.entrypoint = "missing";
  ArgoWorkflowLoad load = readArgoWorkflow(kLibrary, "wf.yaml", options);
  ASSERT_EQ(load.problems.size(), 1u);
  EXPECT_EQ(load.problems[0].message, "template name 'missing' undefined");
}

// Bad input: each one problem, on the line of what is wrong.

TEST(ArgoWorkflow, RefusesYamlThatIsNotAnArgoWorkflow) {
  refused("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", 1,
          "not an Argo workflow: apiVersion is 'v1', expected argoproj.io/v1alpha1");
  refused("[1, 2]\n", 1, "not an Argo workflow: apiVersion is missing");
  refused("", 0, "the file is empty");
  refused("apiVersion: argoproj.io/v1alpha1\nkind: CronWorkflow\nmetadata: {name: x}\n", 2,
          "kind 'CronWorkflow' is not run");
  std::string two = std::string(kHello) + "---\n" + std::string(kHello);
  refused(two, 34, "a second YAML document");
}

TEST(ArgoWorkflow, RefusesAYamlSyntaxErrorWithItsLine) {
  refused("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nspec:\n  templates: [a, b\n  x: 1\n",
          5, "YAML syntax error");
}

// Argo reads strictly (argo lint and submit default to --strict: sigs.k8s.io/yaml's
// YAMLToJSONStrict, go-yaml's UnmarshalStrict), which refuses a key given twice.
TEST(ArgoWorkflow, RefusesAKeyGivenTwiceATabAndAnAliasOfNothing) {
  std::string wf(kHello);
  refused(edited(wf, "  entrypoint: main\n", "  entrypoint: main\n  entrypoint: other\n"), 11,
          "key 'entrypoint' is given twice in one mapping (first on line 10)");
  refused(edited(wf, "  entrypoint: main\n", "\tentrypoint: main\n"), 10,
          "YAML syntax error: a tab character where YAML allows only spaces");
  refused(edited(wf, "  entrypoint: main\n", "  entrypoint: *main\n"), 10,
          "alias *main: no anchor &main before it");
  // Nothing is read of a refused file: the one problem is the YAML's.
  ArgoWorkflowLoad load =
      readArgoWorkflow(edited(wf, "kind: Workflow\n", "kind: Workflow\nkind: CronWorkflow\n"),
                       "wf.yaml");
  ASSERT_EQ(load.problems.size(), 1u) << problems(load);
  EXPECT_FALSE(load.model.has_value());
}

TEST(ArgoWorkflow, ATemplatesDirectoryRefusesOnlyTheTemplatesItCannotRead) {
  TempDir dir;
  dir.write("lib.yaml", kLibrary);
  // A workflow beside the templates is not read from there, even with a key given twice
  // (Argo's own examples directory has one).
  dir.write("other.yaml", "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata:\n"
                          "  name: a\n  name: b\n");
  ArgoReadOptions options;
  options.templates_dir = dir.path();
  const std::string wf = R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: ref-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: a
        templateRef: {name: lib, template: say}
)";
  ok(wf, options);
  // A WorkflowTemplate with one is a problem on its own line.
  dir.write("broken.yaml", "apiVersion: argoproj.io/v1alpha1\nkind: WorkflowTemplate\n"
                           "metadata: {name: broken}\nspec:\n  templates: []\n  templates: []\n");
  ArgoWorkflowLoad load = readArgoWorkflow(wf, "wf.yaml", options);
  ASSERT_EQ(load.problems.size(), 1u) << problems(load);
  EXPECT_EQ(load.problems[0].where.file, (dir / "broken.yaml").string());
  EXPECT_EQ(load.problems[0].where.line, 6);
  EXPECT_NE(load.problems[0].message.find("key 'templates' is given twice"), std::string::npos);
}

TEST(ArgoWorkflow, RefusesAMissingEntrypointAndAnUnknownTemplate) {
  std::string wf(kHello);
  refused(edited(wf, "  entrypoint: main\n", ""), 10, "spec.entrypoint is required");
  refused(edited(wf, "entrypoint: main", "entrypoint: nope"), 10, "template name 'nope' undefined");
  refused(edited(std::string(kSteps), "      - name: param\n        template: echo",
                 "      - name: param\n        template: ech"),
          38, "step 'param': template name 'ech' undefined");
  refused(edited(std::string(kSteps), "  onExit: bye", "  onExit: by"), 7,
          "spec.onExit: template name 'by' undefined");
}

TEST(ArgoWorkflow, RefusesWhatTheModelCannotHonourNamingTheField) {
  std::string wf(kHello);
  const std::string at_spec = "  serviceAccountName: runner\n";
  const std::string at_template = "  - name: main\n";
  const std::string at_container = "      image: busybox\n";
  auto spec = [&](const std::string& text) { return edited(wf, at_spec, at_spec + text); };
  auto tmpl = [&](const std::string& text) { return edited(wf, at_template, at_template + text); };
  auto container = [&](const std::string& text) {
    return edited(wf, at_container, at_container + text);
  };
  refused(spec("  volumes: [{name: v, emptyDir: {}}]\n"), 12,
          "spec.volumes: not supported: volumes are not mounted");
  refused(spec("  synchronization: {mutexes: [{name: m}]}\n"), 12,
          "spec.synchronization: not supported");
  refused(spec("  podSpecPatch: '{}'\n"), 12, "spec.podSpecPatch: not supported");
  refused(spec("  templateDefaults: {timeout: 1s}\n"), 12, "spec.templateDefaults: not supported");
  refused(spec("  hooks: {running: {template: main, expression: 'true'}}\n"), 12,
          "spec.hooks.running: not supported: hooks run on an expression");
  refused(tmpl("    daemon: true\n"), 23, "daemon: not supported: daemon steps");
  refused(tmpl("    sidecars: [{name: s, image: busybox}]\n"), 23,
          "template 'main': sidecars: not supported");
  refused(tmpl("    initContainers: [{name: s, image: busybox}]\n"), 23,
          "initContainers: not supported");
  refused(tmpl("    memoize: {key: k}\n"), 23, "memoize: not supported");
  refused(tmpl("    metrics: {prometheus: []}\n"), 23, "metrics: not supported");
  refused(tmpl("    synchronization: {mutex: {name: m}}\n"), 23, "synchronization: not supported");
  refused(tmpl("    inputs:\n      artifacts: [{name: a, path: /a}]\n"), 24,
          "inputs.artifacts: not supported: artifacts");
  refused(tmpl("    outputs:\n      artifacts: [{name: a, path: /a}]\n"), 24,
          "outputs.artifacts: not supported");
  refused(tmpl("    outputs:\n      result: x\n"), 24, "outputs.result: not supported");
  refused(container("      volumeMounts: [{name: v, mountPath: /v}]\n"), 25,
          "container.volumeMounts: not supported");
  refused(container("      envFrom: [{configMapRef: {name: c}}]\n"), 25,
          "container.envFrom: not supported");
  refused(
      edited(wf, "        value: hi\n", "        valueFrom: {secretKeyRef: {name: s, key: k}}\n"),
      29, "container.env[0].valueFrom: not supported");
  refused(spec("  serviceAcountName: typo\n"), 12,
          "spec.serviceAcountName: not supported (unknown");
}

TEST(ArgoWorkflow, RefusesTemplateKindsThatNeedACluster) {
  std::string wf(kHello);
  std::string tail = wf.substr(wf.find("    container:"));
  auto kind = [&](const std::string& text) { return edited(wf, tail, text); };
  ArgoWorkflowLoad load =
      readArgoWorkflow(kind("    resource:\n      action: create\n"), "wf.yaml");
  ASSERT_EQ(load.problems.size(), 1u) << problems(load);
  EXPECT_EQ(load.problems[0].where.line, 23);
  EXPECT_EQ(load.problems[0].message,
            "resource: not supported: Kubernetes resource templates need a cluster");
  refused(kind("    http: {url: 'http://x'}\n"), 23, "http: not supported");
  refused(kind("    containerSet: {containers: []}\n"), 23, "containerSet: not supported");
  refused(kind("    data: {source: {}}\n"), 23, "data: not supported");
  refused(kind("    timeout: 1m\n"), 22, "template type unspecified");
  refused(kind("    suspend: {}\n    container: {image: busybox}\n"), 22,
          "multiple template types specified: container, suspend");
}

TEST(ArgoWorkflow, RefusesBrokenDags) {
  std::string dag(kDag);
  refused(edited(dag, "depends: A\n", "depends: D\n"), 15, "cycle through dag task 'B'");
  refused(edited(dag, "depends: A\n", "depends: X\n"), 15, "task 'B': dependency 'X' not defined");
  refused(edited(dag, "|| C.Failed", "|| Z.Failed"), 21, "dependency 'Z' not defined");
  refused(edited(dag, "target: D", "target: Q"), 11, "target 'Q' is not defined");
  refused(edited(dag, "depends: A\n", "dependencies: [A]\n"), 10,
          "cannot use both 'depends' and 'dependencies'");
  refused(edited(dag, "        depends: \"(B",
                 "        continueOn: {failed: true}\n        depends: \"(B"),
          23, "cannot use 'continueOn' when using 'depends'");
  // Renaming C leaves D's dependency on C without a task too.
  ArgoWorkflowLoad load =
      readArgoWorkflow(edited(dag, "      - name: C\n", "      - name: B\n"), "wf.yaml");
  ASSERT_EQ(load.problems.size(), 2u) << problems(load);
  EXPECT_EQ(load.problems[0].where.line, 18);
  EXPECT_EQ(load.problems[0].message, "dag task name 'B' is not unique");
  refused(R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: empty}
spec:
  entrypoint: main
  templates:
  - name: main
    dag: {tasks: []}
)",
          8, "a dag must have at least one task");
  refused(edited(edited(dag, "      - name: D\n", "      - name: 4D\n"), "target: D", "target: 4D"),
          21, "dag task '4D' name cannot begin with a digit");
}

TEST(ArgoWorkflow, RefusesBadParametersAndLimits) {
  std::string wf(kHello);
  refused(edited(wf, "      value: calm\n", "      value: angry\n"), 18,
          "spec.arguments.parameters.mood.value should be present in");
  refused(edited(wf, "    - name: mood\n", "    - name: who\n"), 18,
          "[1].name 'who' is not unique");
  std::string steps(kSteps);
  refused(edited(steps, "retryPolicy: Always", "retryPolicy: Sometimes"), 62,
          "Sometimes is not a valid RetryPolicy");
  refused(edited(steps, "duration: \"1\"", "duration: soon"), 63,
          "backoff.duration: 'soon' is not a duration");
  refused(edited(steps, "  - name: echo\n", "  - name: echo\n    timeout: \"30\"\n"), 53,
          "timeout: '30' is not a duration");
  refused(edited(steps, "  - name: echo\n", "  - name: echo\n    parallelism: 2\n"), 53,
          "parallelism is only valid for steps and dag templates");
  refused(edited(steps, "    parallelism: 2\n", "    activeDeadlineSeconds: 5\n"), 10,
          "activeDeadlineSeconds is only valid for leaf templates");
  refused(edited(steps, "        withParam:", "        withItems: [1]\n        withParam:"), 37,
          "only one of withItems, withParam, withSequence");
  refused(edited(steps, "{count: \"3\",", "{count: \"3\", end: \"5\","), 34,
          "exactly one of count and end");
  refused(edited(steps, "      - name: maps\n", "      - name: items\n"), 23,
          "name 'items' is not unique");
  refused(edited(steps, "          - name: msg\n            value: 1\n", "          - name: msg\n"),
          16, "arguments.parameters.msg.value is required");
  std::string dag(kDag);
  refused(edited(dag, "          path: /tmp/out\n", "          parameter: x\n"), 42,
          "path must be specified for container and script templates");
  refused(edited(dag, "        globalName: result\n", "        value: x\n"), 26,
          "has both valueFrom and value specified");
}

TEST(ArgoWorkflow, RefusesOddShapesWithProblemsAndNeverThrows) {
  const char* const kOdd[] = {
      "a: &a [*a]\n",
      "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: x}\n"
      "spec: {entrypoint: a, templates: [&t {name: a, suspend: {}, metrics: *t}]}\n",
      "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: x}\n"
      "spec: {entrypoint: a, templates: [{name: a, steps: [[{name: b, inline: &i {steps: [[{name: "
      "c, inline: *i}]]}}]]}]}\n",
      "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: x\nspec: 5\n",
      "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: x}\nspec: {entrypoint: "
      "a, templates: x}\n",
      "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: x}\nspec: {entrypoint: "
      "a, templates: "
      "[1, [2], {name: a, steps: [[x, [1]], 3]}, {name: b, dag: {tasks: [1, {name: t}]}}, {name: "
      "c, plugin: []}, "
      "{name: d, container: {env: [1, {valueFrom: 2}], command: {a: 1}}}, "
      "{name: e, inputs: {parameters: [1, {name: p, enum: [], value: [1]}]}, suspend: {}}, "
      "{name: f, script: {image: x}, outputs: {parameters: [{name: o, valueFrom: 3}]}, "
      "retryStrategy: {backoff: 4, limit: [1]}}]}\n",
      "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: x}\nspec: {entrypoint: "
      "a, hooks: 1, "
      "executorPlugins: [1, {metadata: 2, spec: {sidecar: 3}}], arguments: {parameters: 7}, "
      "templates: [{name: a, suspend: 1, parallelism: x, activeDeadlineSeconds: [1]}]}\n",
      "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: x}\nspec: {entrypoint: "
      "a, templates: "
      "[{name: a, steps: [[{name: s, template: a, withItems: 5, withSequence: 3, hooks: {exit: 5}, "
      "arguments: 4, "
      "continueOn: 1, when: [1]}]]}]}\n",
  };
  for (const char* text : kOdd) {
    ArgoWorkflowLoad load;
    EXPECT_NO_THROW(load = readArgoWorkflow(text, "wf.yaml")) << text;
    EXPECT_FALSE(load.problems.empty()) << text;
    for (const auto& p : load.problems) EXPECT_EQ(p.where.file, "wf.yaml");
  }
}

TEST(ArgoWorkflow, LoadsAFileAndNamesAnUnreadableOne) {
  TempDir dir;
  auto file = dir.write("hello.yaml", kHello);
  ArgoWorkflowLoad load = loadArgoWorkflow(file);
  ASSERT_TRUE(load.ok()) << problems(load);
  EXPECT_EQ(load.model->templates.at(0).where.file, file);
  load = loadArgoWorkflow(dir / "missing.yaml");
  ASSERT_EQ(load.problems.size(), 1u);
  EXPECT_NE(load.problems[0].message.find("missing.yaml"), std::string::npos);
  EXPECT_FALSE(load.model.has_value());
}

TEST(ArgoWorkflow, TellsArgoFilesFromOtherYaml) {
  EXPECT_TRUE(looksLikeArgo(kHello));
  EXPECT_TRUE(looksLikeArgo(kLibrary));
  EXPECT_FALSE(looksLikeArgo("apiVersion: v1\nkind: ConfigMap\n"));
  EXPECT_FALSE(looksLikeArgo("[name = 'toml'"));
  EXPECT_FALSE(looksLikeArgo(""));
}

}  // namespace
}  // namespace plugboard::core

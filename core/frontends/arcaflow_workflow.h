// core/frontends/arcaflow_workflow.h: an Arcaflow workflow file (workflow.yaml, `version:
// v0.2.0`) read as the Arcaflow engine reads it (workflow/yaml.go, workflow/model.go,
// internal/step/plugin/provider.go, internal/step/foreach/provider.go), then put into the
// one workflow model (core/workflows/model.h).
//
// Reading keeps file:line:column of everything. Values keep their YAML types (an integer
// stays an integer); the tagged values `!expr`, `!oneof`, `!ordisabled`, `!wait-optional`
// and `!soft-optional` become marked JSON objects (arcaflowTag() tells them; the
// expression text is parsed with core/workflows/arcaflow_expression.h when read, so a bad
// expression is a problem with its line and column). Other `!` tags, unknown fields, a
// version other than exactly `v0.2.0`, a step reading a step that does not exist and a
// cycle among the steps are problems naming the field, step or cycle.
//
// The order of steps is the engine's: a step waits for every step whose outputs its
// expressions read (`$.steps.NAME...` in input, enabled, deploy, items,
// closure_wait_timeout) and for those `wait_for` names; `stop_if` is read while the step
// runs, not waited for. Free functions; thread-safe.
#ifndef PLUGBOARD_CORE_FRONTENDS_ARCAFLOW_WORKFLOW_H_
#define PLUGBOARD_CORE_FRONTENDS_ARCAFLOW_WORKFLOW_H_

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.h"
#include "core/workflows/model.h"

namespace plugboard::core {

// A tagged value as the reader marks it in the JSON it keeps:
//   {"\u0001tag": "!expr", "expr": TEXT, "line": L, "column": C}  (also !wait-optional,
//       !soft-optional: the same members);
//   {"\u0001tag": "!oneof", "discriminator": D, "one_of": {KEY: value...}, "line", "column"};
//   {"\u0001tag": "!ordisabled", "expr": TEXT, "step": NAME, "line", "column"}.
// Returns the tag ("!expr", ...) of such an object, or "" for any other value.
inline constexpr const char* kArcaflowTagKey = "\x01tag";
std::string arcaflowTag(const Json& value);

struct ArcaflowWorkflow;

struct ArcaflowStep {
  std::string id;
  enum class Kind { kPlugin, kForeach };
  Kind kind = Kind::kPlugin;
  // kPlugin: plugin.src, plugin.deployment_type ("image" or "python"), the plugin's step
  // (empty: its only step).
  std::string src, deployment_type, step;
  // kForeach: the sub-workflow file (relative to the context directory), its parallelism.
  std::string workflow;
  Json parallelism;  // null: the engine's default (1)
  // kForeach: the sub-workflow as loadArcaflowWorkflow() read it (beside the workflow's
  // file); null when read from text alone, or when it could not be read (a problem).
  std::shared_ptr<const ArcaflowWorkflow> sub;
  // As written (values may be tagged): null when not given.
  Json input, deploy, wait_for, enabled, stop_if, closure_wait_timeout, items;
  // Where `deploy` and `closure_wait_timeout` are written, and each key inside `deploy`,
  // by dotted path ("deploy", "deploy.deployment.host.NetworkMode",
  // "closure_wait_timeout"): for the messages of what reads them.
  std::map<std::string, SourceRef> at;
  std::vector<std::string> depends_on;  // steps it waits for, sorted, each once
  SourceRef where;
};

struct ArcaflowWorkflow {
  std::filesystem::path file;
  std::string version;
  Json input = Json::object();  // the input scope as written: {root, objects}
  std::vector<ArcaflowStep> steps;  // in file order
  // Output id -> value (may be tagged); the deprecated `output` is the one output "success".
  std::vector<std::pair<std::string, Json>> outputs;
  std::vector<std::vector<std::string>> outputs_depend_on;  // per output, like depends_on
  bool deprecated_output = false;
  const ArcaflowStep* step(std::string_view id) const;
};

struct ArcaflowLoad {
  std::optional<ArcaflowWorkflow> workflow;  // set when the file is an Arcaflow workflow
  std::vector<ModelProblem> problems;        // empty: it can run
  bool ok() const { return workflow.has_value() && problems.empty(); }
};

// True when `text` is a YAML mapping with `version` and without `apiVersion` or `kind`:
// how a command tells an Arcaflow workflow from an Argo one. Never throws.
bool looksLikeArcaflow(std::string_view text);

// Reads `text`; `file_label` names the file in SourceRefs.
ArcaflowLoad readArcaflowWorkflow(std::string_view text, const std::string& file_label);
// The file, and the sub-workflow of each foreach step (the `workflow` file, relative to
// the directory of the file that names it), recursively: their problems name their files.
ArcaflowLoad loadArcaflowWorkflow(const std::filesystem::path& path);

// An input file (--input: YAML or JSON), its plain scalars typed as the workflow file's
// are. Errors name the file (and line).
Expected<Json> readArcaflowInput(const std::filesystem::path& file);

// The workflow's `input` checked against its input scope (the typed schema language of the
// Arcaflow SDK, converted by plugboard/host/arcaflow_schema.h): one message per bad field,
// each starting with its path ("input.name: ..."); empty when it fits.
std::vector<std::string> checkArcaflowInput(const ArcaflowWorkflow& wf, const Json& input);

// `input` as the engine's expressions see it as `$.input`: its scope's Unserialize then
// Serialize (the Go SDK's schema/*.go): the defaults of absent properties filled in (each
// `default` is JSON text, as the SDK's schema language writes it), and each scalar given
// the type its property declares: a float is a float even when written `0` or "0.5", an
// integer, a bool from their text. Through objects, refs, lists, maps and the branch a
// one_of's discriminator chooses. REQUIRES: checkArcaflowInput() found no problem.
Json typedArcaflowInput(const ArcaflowWorkflow& wf, Json input);

// The plugin an image `src` names, as plugboard's registry names plugins: the image's last
// path component without its tag or digest, lower case, each character a name may not
// hold ('.', '_', '-', letters and digits) written '-'; the tag as its version when it is
// one ("0.5.1", "v0.5.1"), else none. `quay.io/arcalot/arcaflow-plugin-example:0.5.1` is
// arcaflow-plugin-example@0.5.1.
struct ArcaflowPluginName {
  std::string name;
  std::string version;  // empty: the tag is no version (e.g. latest)
};
ArcaflowPluginName arcaflowImagePlugin(std::string_view src);

// The workflow as the one model: a dag template "main" with a task per step, each
// depending on the steps its expressions read and wait_for names; a plugin template per
// plugin step (key: arcaflowImagePlugin()'s name and version for an image, the src for
// python; rpc "arcaflow.<step>" or "template.execute"); the
// tagged values kept as marked JSON in the arguments. A foreach step X is a dag template
// "X" whose parallelism is the step's, with input parameter `items` (the list, filled by
// the value language) and one task "items" looping over it (withParam), each item calling
// the dag "X:workflow" (the sub-workflow's steps as tasks, input parameter `input`: the
// item) whose plugin steps are the templates "X/STEP" (":" and "/" are in no step id).
WorkflowModel arcaflowModel(const ArcaflowWorkflow& wf);
// The name of the model's dag of the workflow's own steps: "main", or "main-..." when a
// step has that name.
std::string arcaflowMainTemplate(const ArcaflowWorkflow& wf);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_FRONTENDS_ARCAFLOW_WORKFLOW_H_

// core/workflows/workflow.h: workflow files (TOML), parsed and checked before anything runs.
//
// The format is documented in docs/workflows.md. loadWorkflow() checks what the file
// alone can tell: TOML syntax, unknown keys, types, duplicate step ids, unknown
// dependencies, cycles, reference syntax and references to unknown inputs or to steps a
// step does not depend on; checkWorkflow() (core/workflows/workflow_check.h) adds what needs the
// installed plugins. Every problem names the file, line, column and step. Value types;
// thread-safe.
#ifndef PLUGBOARD_CORE_WORKFLOWS_WORKFLOW_H_
#define PLUGBOARD_CORE_WORKFLOWS_WORKFLOW_H_

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/duration.h"
#include "core/base/expected.h"
#include "core/workflows/substitution.h"

namespace plugboard::core {

using Json = nlohmann::json;

struct SourcePos {
  int line = 0;
  int column = 0;
};

struct RetryPolicy {
  int limit = 0;         // extra attempts after the first
  Millis backoff{1000};  // delay before the first retry
  double factor = 2.0;   // each later delay is the previous one times this
};

struct WorkflowStep {
  std::string id;
  std::string plugin;   // the key as written, without "@version"
  std::string version;  // empty: the highest installed
  std::string rpc = "template.execute";
  Json args;  // may hold ${...} references
  // The template's input parameters, as Argo's agent sends them to a sidecar
  // (template.inputs.parameters): name -> string, number or boolean; may hold ${...}.
  Json parameters = Json::object();
  std::vector<std::string> depends;
  std::optional<Millis> timeout;
  RetryPolicy retry;
  bool poll = false;  // allow polling when `plugin` names no installed plugin
  // `deploy = "process"` or `deploy = { deployer = "process", memory = "256M" }`: the
  // deployer that runs this step's plugin, and its options. Empty: the default order.
  std::string deployer;
  Json deploy_options = Json::object();
  SourcePos deploy_pos;
  // `when = "${inputs.mode} == fast"`: the step runs only when this holds once its
  // references are filled (Argo's `when` rules); empty: always.
  std::string when;
  // `items = [...]` or `items = "${steps.ID.outputs.parameters.LIST}"`: the step runs once
  // per item (${item}, ${item.KEY}); null: once.
  Json items;
  // `exit = true`: runs after every other step ended, whatever their outcome.
  bool exit = false;
  SourcePos pos;
};

// A workflow output (`[outputs]` NAME = "${steps.ID.outputs.parameters.NAME}").
struct WorkflowOutput {
  std::string name;
  std::string value;
  SourcePos pos;
};

struct WorkflowInput {
  std::string name;
  std::optional<Json> default_value;  // none: the input is required
  std::string description;
  SourcePos pos;
};

struct Workflow {
  std::string name;
  std::string description;
  std::filesystem::path file;
  std::vector<WorkflowInput> inputs;
  std::vector<WorkflowStep> steps;
  std::vector<WorkflowOutput> outputs;  // in file order

  const WorkflowStep* step(const std::string& id) const;
};

struct WorkflowProblem {
  std::string file;
  SourcePos pos;
  std::string step;  // empty when the problem is not about one step
  std::string message;
  // "file:line:column: step 'id': message"
  std::string oneLine() const;
};

struct LoadedWorkflow {
  std::optional<Workflow> workflow;  // set when the file parsed, even with problems
  std::vector<WorkflowProblem> problems;
  bool ok() const { return workflow.has_value() && problems.empty(); }
};

// The references of a step's args, parameters, `when` and `items`. The error says which
// holds the malformed one ("args: ...", "parameters: ...", "when: ...", "items: ...").
Expected<std::vector<Reference>> stepReferences(const WorkflowStep& step);

// How a text is read: a `[[steps]]` table at a time where it can be (the TOML tree of one
// step in memory at once, not of the whole file), else whole; or whole. Both give the same
// workflow and problems (kWhole is there to show it).
enum class WorkflowReading { kByStep, kWhole };

LoadedWorkflow loadWorkflow(const std::filesystem::path& file);  // kByStep
LoadedWorkflow parseWorkflow(std::string_view text, const std::string& file_label,
                             WorkflowReading reading = WorkflowReading::kByStep);
// The text read a step at a time; nullopt where it cannot tell that this reads as the
// whole file would: no `[[steps]]` line, a TOML syntax error, a `[[steps]]` line inside a
// multi-line string, a piece with other than one step, or a top-level table that goes on
// after the steps begin (whole reading then reports or merges it).
std::optional<LoadedWorkflow> parseWorkflowByStep(std::string_view text,
                                                  const std::string& file_label);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_WORKFLOW_H_

// core/frontends/arcaflow_values.h: an Arcaflow workflow's values at run time, as the
// Arcaflow engine resolves them (workflow/workflow.go: notifySteps, resolveExpressions,
// resolveOneOfExpression, resolveOptionalExpression; internal/step/plugin/provider.go: the
// enabling and disabled stages), for the one engine (core/workflows/engine.h) through
// the model's ValueLanguage.
//
// The data an expression reads is the engine's: `$.input` (the checked input, typed) and
// `$.steps.STEP.outputs.OUTPUT` (the data of the output a step's plugin answered: its
// outputs.values without output_id) or `$.steps.STEP.disabled.output` ({"message": "Step
// STEP/PLUGINSTEP disabled"}). A value reading an output the step did not give (another
// output, a crashed or skipped step) cannot resolve: the step that needs it is skipped, and
// a workflow output that needs it is not produced. Immutable; thread-safe.
#ifndef PLUGBOARD_CORE_FRONTENDS_ARCAFLOW_VALUES_H_
#define PLUGBOARD_CORE_FRONTENDS_ARCAFLOW_VALUES_H_

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/frontends/arcaflow_workflow.h"
#include "core/workflows/engine.h"

namespace plugboard::core {

// The message of a disabled step, and the skipped node's message that tells it.
std::string arcaflowDisabledMessage(const ArcaflowStep& step);

class ArcaflowValues final : public ValueLanguage {
 public:
  // `files_dir`: readFile's relative paths (the context directory), which it reads only
  // beneath unless `read_anywhere`.
  ArcaflowValues(std::shared_ptr<const ArcaflowWorkflow> workflow, std::filesystem::path files_dir,
                 bool read_anywhere = false);

  // A step's call: disabled (`enabled` false: Skipped with the disabled message), waiting on
  // an output that did not come (Skipped, naming it), or run with its input filled.
  Expected<Decision> decide(const TemplateCall& call, const Template& tmpl,
                            const Scope& scope) const override;
  // `stop_if` resolved to anything but false (provider.go provideCancelledInput): the
  // step is cancelled; the plugin's answer (its `cancelled` output, say) is its outcome.
  bool stops(const TemplateCall& call, const Scope& scope, std::string* message) const override;
  // A foreach's dags (arcaflowModel()): the sub-workflow's output of an item
  // ({"output_id": ID, "data": DATA}, or {"error": WHY} when none resolved), and the
  // foreach step's output from its items' as internal/step/foreach/provider.go
  // (processInput) gives it: `success` {data: [each item's data, in item order]} when every
  // item gave `success`, else `error` {data: {i: data of the items that did},
  // messages: {i: why of the others}}.
  std::optional<Json> outputs(const Template& tmpl, const Scope& scope) const override;
  // The workflow's dag, and each item's sub-workflow: the first of its outputs that
  // resolves ({"output_id": ID, "data": DATA}; {"error": WHY} when its values fail) ends
  // it, and the steps still running are stopped (workflow.go: Execute returns with the
  // first output node resolved; its deferred terminateAllSteps closes the others).
  std::optional<Json> ends(const Template& tmpl, const Scope& scope) const override;
  // {"error": WHY} (an output's value failed): WHY.
  std::string failure(const Json& value) const override;

  // The workflow's output once the run ended (the value ends() gave its dag); nullopt
  // when none resolved ("no more possible outputs").
  struct Output {
    std::string id;
    Json data;
    bool error = false;  // the output "error": the engine's exit code 2
  };
  Expected<std::optional<Output>> output(const RunResult& result) const;

 private:
  // What a template of the model is: a step of the workflow or of a sub-workflow, a
  // foreach step's dag, or a sub-workflow's dag.
  struct Role {
    enum class Kind { kStep, kForeach, kSubWorkflow, kWorkflow } kind = Kind::kStep;
    const ArcaflowWorkflow* wf = nullptr;  // the workflow the step (or sub-workflow) is in
    const ArcaflowStep* step = nullptr;    // kStep, kForeach: the step; kSubWorkflow: its foreach
    bool nested = false;                   // wf is a sub-workflow: $.input is the dag's `input`
  };
  void addRoles(const ArcaflowWorkflow& wf, const std::string& prefix, bool nested);
  const Role* role(const std::string& template_name) const;

  std::shared_ptr<const ArcaflowWorkflow> wf_;
  std::filesystem::path files_dir_;
  bool read_anywhere_ = false;
  std::map<std::string, Role> roles_;
};

// `{"output_id": ID, "output_data": DATA}` as the engine prints it (YAML, keys sorted).
std::string arcaflowOutputYaml(const std::string& id, const Json& data);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_FRONTENDS_ARCAFLOW_VALUES_H_

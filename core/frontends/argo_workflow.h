// core/frontends/argo_workflow.h: Argo Workflow YAML (a `Workflow`, or a `WorkflowTemplate`
// run from an entry point) read into the one workflow model (core/workflows/model.h).
//
// The reader takes the file as Argo's controller would and keeps the line and column of
// everything it reads, so that each problem names file:line:column. What the model cannot
// honour on this machine (artifacts, volumes, resource templates, daemons,
// synchronization, ...) is a problem naming the field; it is never dropped quietly.
// Fields that only place or label pods on a cluster are accepted and have no effect here;
// docs/decisions.md ("Argo Workflow YAML front end") lists both sets and the Argo source
// each rule comes from.
//
// `templateRef`s are resolved against the WorkflowTemplates of a directory the caller
// names: the referenced template (and the templates it calls in turn) join the model
// named "<workflow-template>/<template>".
//
// Free functions; thread-safe (they share nothing).
#ifndef PLUGBOARD_CORE_FRONTENDS_ARGO_WORKFLOW_H_
#define PLUGBOARD_CORE_FRONTENDS_ARGO_WORKFLOW_H_

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/launch/placement.h"
#include "core/workflows/model.h"

namespace plugboard::core {

struct ArgoReadOptions {
  // The template to start from. A Workflow: overrides spec.entrypoint when set. A
  // WorkflowTemplate: required unless its spec names one (Argo's `--entrypoint`).
  std::string entrypoint;
  // Where the WorkflowTemplates of `templateRef`s are (*.yaml, *.yml in it and below, one or more
  // documents each); empty: a templateRef is a problem.
  std::filesystem::path templates_dir;
  // The ceilings of a container template's and an executor plugin's securityContext.
  ContainmentPolicy containment;
};

struct ArgoWorkflowLoad {
  // Set when the file is an Argo Workflow or WorkflowTemplate, even with problems; what a
  // problem is about is left out of it.
  std::optional<WorkflowModel> model;
  std::vector<ModelProblem> problems;  // in file order; empty: the model can run
  bool ok() const { return model.has_value() && problems.empty(); }
};

// Reads `text`; `file_label` names the file in SourceRefs (as the user gave it).
ArgoWorkflowLoad readArgoWorkflow(std::string_view text, const std::string& file_label,
                                  const ArgoReadOptions& options = {});

// Reads the file at `path` (an unreadable file is a problem naming it).
ArgoWorkflowLoad loadArgoWorkflow(const std::filesystem::path& path,
                                  const ArgoReadOptions& options = {});

// True when `text` is a YAML document whose apiVersion is argoproj.io/...: how a command
// tells an Argo file from another YAML file before reading it. Never throws.
bool looksLikeArgo(std::string_view text);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_FRONTENDS_ARGO_WORKFLOW_H_

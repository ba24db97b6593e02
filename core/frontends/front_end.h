// core/frontends/front_end.h: a workflow file, whichever peer wrote it, as the one model.
//
// loadModel() reads the file and picks its front end by what it holds: an Argo `Workflow`
// or `WorkflowTemplate` (apiVersion argoproj.io/..., core/frontends/argo_workflow.h), an
// Arcaflow workflow (`version` and no apiVersion/kind, core/frontends/arcaflow_workflow.h); other
// YAML is refused with a line saying which kinds are read. (TOML workflows are read by
// core/workflows/workflow.h for now.) The executor plugins of an Argo run come from a
// directory of plugin manifests or ConfigMaps, or from the workflow's own
// spec.executorPlugins, which then replace the directory's, as Argo's controller does.
// Free functions; thread-safe.
#ifndef PLUGBOARD_CORE_FRONTENDS_FRONT_END_H_
#define PLUGBOARD_CORE_FRONTENDS_FRONT_END_H_

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/base/expected.h"
#include "core/launch/placement.h"
#include "core/launch/registry.h"
#include "core/workflows/model.h"

namespace plugboard::core {

struct ModelSource {
  std::string entrypoint;               // a WorkflowTemplate's, or to override the file's
  std::filesystem::path templates_dir;  // WorkflowTemplates that templateRef names
  ContainmentPolicy containment;        // what a securityContext may ask for
};

struct LoadedModel {
  std::optional<WorkflowModel> model;  // set when the file parsed, even with problems
  std::vector<ModelProblem> problems;
  bool ok() const { return model.has_value() && problems.empty(); }
};

// True when `file` is a TOML workflow (read by loadWorkflow(), not loadModel()).
bool isTomlWorkflow(const std::filesystem::path& file);
// True when `file` holds an Arcaflow workflow (core/frontends/arcaflow_workflow.h): YAML
// whose top level has `version` and neither apiVersion nor kind. False when unreadable.
bool isArcaflowWorkflow(const std::filesystem::path& file);

LoadedModel loadModel(const std::filesystem::path& file, const ModelSource& source = {});

// A parameter file (`--parameter-file`, as `argo submit` reads it): a YAML or JSON mapping
// of parameter name to value. Errors name the file and line.
Expected<Json> readParameterFile(const std::filesystem::path& file);

// The registry entries of an Argo run's executor plugins: each ExecutorPlugin manifest or
// ConfigMap in `dir` (what `argo executor-plugin build` writes), or, when the workflow has
// spec.executorPlugins, those, written as manifests into `scratch` (a private directory).
// Every entry may be polled, as Argo's agent offers every template to every plugin.
Expected<std::vector<RegistryEntry>> executorPlugins(const WorkflowModel& model,
                                                     const std::filesystem::path& dir,
                                                     const std::filesystem::path& scratch);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_FRONTENDS_FRONT_END_H_

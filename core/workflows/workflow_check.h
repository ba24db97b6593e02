// core/workflows/workflow_check.h: what a workflow needs of the installed plugins and of the user's
// parameters, checked before anything runs and without loading any plugin.
//
// checkWorkflow() reports unknown plugins, RPCs not provided, args against declared input
// schemas, and references to outputs a plugin declares it does not produce. With the
// dispatcher's routes, each step is resolved as the run resolves it (nothing is
// started): an unknown deployer, a deployer with no artifact for the plugin, or a bad
// deployer option is a problem, and a plugin known only to the registry is not. A plugin
// whose deployer describes plugins without starting them (Launcher::describe()) has its
// args checked against the manifest that deployer gives. Every problem names the file,
// line, column and step. Thread-safe.
#ifndef PLUGBOARD_CORE_WORKFLOWS_WORKFLOW_CHECK_H_
#define PLUGBOARD_CORE_WORKFLOWS_WORKFLOW_CHECK_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/manifests/catalog.h"
#include "core/launch/launcher.h"
#include "core/routing/dispatcher.h"
#include "core/workflows/workflow.h"

namespace plugboard::core {

// What bounds the starts the check makes to read a manifest (a plugin whose deployer
// describes it, with nothing cached), before the run: `cancel` stops them (Ctrl-C), and
// with a `default_timeout` each waits at most its step's deadline (the step's timeout,
// else this), a timer on `clock` (Runtime::prepare() gives the runtime's when it is null).
// A start cut short is the step's to make again when it runs.
struct CheckStarts {
  StartControl* cancel = nullptr;
  std::optional<Millis> default_timeout;
  AlarmClock* clock = nullptr;  // REQUIRES: set with `default_timeout`
  // `validate`: a plugin that could not be started to read its manifest is a problem that
  // says what was not checked and why (in a run it is the step's error when it runs).
  bool unstarted_is_problem = false;
};

// `inputs` are the resolved input values (resolveInputs()). `routes` (the dispatcher a run
// uses) may be null: then a step with `deploy` is a problem.
std::vector<WorkflowProblem> checkWorkflow(const Workflow& workflow, const Catalog& catalog,
                                           const Json& inputs, const Dispatcher* routes = nullptr,
                                           const CheckStarts& starts = {});

// The input values: defaults overridden by `params` (text, converted to the default's
// type). Errors for a param naming no input, a bad value, a required input left out.
Expected<Json> resolveInputs(const Workflow& workflow,
                             const std::map<std::string, std::string>& params);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_WORKFLOW_CHECK_H_

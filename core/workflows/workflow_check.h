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

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/manifests/catalog.h"
#include "core/launch/launcher.h"
#include "core/routing/dispatcher.h"
#include "core/workflows/model.h"
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

// What a step asks the dispatcher: the plugin it names, with the deployer (and the options,
// a workflow's) it chooses. The view lives as long as `step`.
RouteQuery routeQueryOf(const WorkflowStep& step);

// `inputs` are the resolved input values (resolveInputs()). `routes` (the dispatcher a run
// uses) may be null: then a step with `deploy` is a problem.
std::vector<WorkflowProblem> checkWorkflow(const Workflow& workflow, const Catalog& catalog,
                                           const Json& inputs, const Dispatcher* routes = nullptr,
                                           const CheckStarts& starts = {});

// One call's args checked against the input schema of the plugin `target` places, when its
// deployer describes plugins (Launcher::describe(): from the deployer's cache, else by
// starting the plugin within the step's deadline, `step_timeout` or the default): the
// plugin must provide `rpc`, and `args` fit its schema (each path starting with `where`;
// `unknown` marks values only the run knows, which pass). Each problem goes to `report`;
// a plugin that could not be started is one when `starts.unstarted_is_problem`. The one
// check of described plugins, for checkWorkflow() and checkModelArgs().
void checkDescribedArgs(Launcher& launcher, const LaunchTarget& target, const std::string& rpc,
                        const Json& args, const std::string& where,
                        const std::function<bool(const Json&)>& unknown,
                        std::optional<Millis> step_timeout, const CheckStarts& starts,
                        const std::function<void(std::string)>& report);

// The plugin templates of a model checked as checkWorkflow() checks a TOML workflow's
// steps, each placed by `routes` as the run places it: `args` holds, by template name, the
// args known before the run (a template not in it is not checked); a plugin of the
// plugin directories by its manifest, one placed by the launcher through
// checkDescribedArgs(). Each problem names the template's place and "step 'NAME'".
std::vector<ModelProblem> checkModelArgs(const WorkflowModel& model,
                                         const std::map<std::string, Json>& args,
                                         const std::string& where,
                                         const std::function<bool(const Json&)>& unknown,
                                         const Dispatcher& routes, const CheckStarts& starts);

// The input values: defaults overridden by `params` (text, converted to the default's
// type). Errors for a param naming no input, a bad value, a required input left out.
Expected<Json> resolveInputs(const Workflow& workflow,
                             const std::map<std::string, std::string>& params);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_WORKFLOW_CHECK_H_

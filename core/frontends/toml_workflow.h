// core/frontends/toml_workflow.h: plugboard's TOML workflow (core/workflows/workflow.h) as
// the one model (core/workflows/model.h), so that it runs on the engine as Argo YAML does.
//
// The shape: the workflow's inputs are the model's parameters (typed defaults kept); one
// dag template, the entry point, whose tasks are the steps that are not exit steps (task =
// step id, `depends` as "a && b"); the exit steps, when there are any, are the tasks of a
// second dag, the workflow's onExit; a plugin template with the step's plugin call, retry
// and timeout, shared by the steps whose calls differ only in args (it is named as the
// first of them; each task carries its step's args and names the template the plugin
// receives after its step); the step's `when` and `items` on its task;
// [outputs] as global outputs of the entry dag.
//
// References become the model's tags: ${inputs.X} -> {{workflow.parameters.X}},
// ${workflow.name} -> {{workflow.name}}, ${workflow.status} -> {{workflow.status}},
// ${steps.ID.outputs.parameters.N} -> {{tasks.ID.outputs.parameters.N}}, ${item} ->
// {{item}}; "$${" -> "${"; a literal "{{" -> {{="{{"}}. A string that is exactly one
// reference keeps its value's type, as tags do. A step's `parameters` are the task's
// arguments (Argo's parameters are text), and its args name what only the task's scope
// knows (step outputs, items) through arguments of their own, which the template a plugin
// receives does not list: the request is the one a TOML step always sent,
// {"name": ID, "inputs": {"parameters": [{"name", "value"}]}}.
// Free functions; thread-safe.
#ifndef PLUGBOARD_CORE_FRONTENDS_TOML_WORKFLOW_H_
#define PLUGBOARD_CORE_FRONTENDS_TOML_WORKFLOW_H_

#include "core/workflows/model.h"
#include "core/workflows/workflow.h"

namespace plugboard::core {

// REQUIRES: `workflow` passed loadWorkflow() without problems.
WorkflowModel tomlModel(const Workflow& workflow);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_FRONTENDS_TOML_WORKFLOW_H_

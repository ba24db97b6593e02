// core/frontends/arcaflow_known.h: what an Arcaflow workflow's steps are given that is known
// before the run, for `validate` to check against the plugins' input schemas as the engine
// checks a step's input before it starts it (docs/arcaflow.md, "Workflows").
// Free functions; thread-safe.
#ifndef PLUGBOARD_CORE_FRONTENDS_ARCAFLOW_KNOWN_H_
#define PLUGBOARD_CORE_FRONTENDS_ARCAFLOW_KNOWN_H_

#include <filesystem>
#include <map>
#include <string>

#include "core/frontends/arcaflow_workflow.h"

namespace plugboard::core {

// Each plugin step's `input` as far as it is known before the run, by the template name
// arcaflowModel() gives the step ("STEP"; "FOREACH/STEP" in a foreach's sub-workflow):
// untagged values as written; an `!expr` (or `!wait-optional`, `!soft-optional`) that
// reads nothing but `$.input`, evaluated when `input` is given (the checked input with its
// defaults; null: not known; a sub-workflow's input, its item, never is), or that reads
// nothing at all; every other tagged value (reading other steps' outputs, `!oneof`,
// `!ordisabled`, or an expression that fails here) left as written, which arcaflowTag()
// tells: known only when the step runs. `files_dir`: readFile's relative paths.
std::map<std::string, Json> arcaflowKnownInputs(const ArcaflowWorkflow& wf, const Json* input,
                                                const std::filesystem::path& files_dir,
                                                bool read_anywhere = false);

// True for a value arcaflowKnownInputs() left for the run to know.
bool arcaflowUnknown(const Json& value);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_FRONTENDS_ARCAFLOW_KNOWN_H_

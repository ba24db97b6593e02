// core/workflows/substitution.h: ${...} references in workflow args.
//
// A string in a step's args may hold references:
//   ${inputs.X}                               a workflow input
//   ${workflow.name}                          the workflow's name
//   ${steps.ID.outputs.parameters.NAME}       an output parameter of an earlier step
//   ${item}, ${item.KEY}                      the item of a step's loop (`items`)
//   ${workflow.status}                        the workflow's phase, in an exit step
// "$${" stands for a literal "${". A string that is exactly one reference to an input
// takes the input's value with its type; every other reference is spliced in as text.
// Value types and free functions; thread-safe.
#ifndef PLUGBOARD_CORE_WORKFLOWS_SUBSTITUTION_H_
#define PLUGBOARD_CORE_WORKFLOWS_SUBSTITUTION_H_

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/defaults.h"
#include "core/base/expected.h"

namespace plugboard::core {

using Json = nlohmann::json;

struct Reference {
  enum class Kind { kInput, kWorkflowName, kStepOutput, kItem, kWorkflowStatus };
  Kind kind;
  std::string input;   // kInput
  std::string step;    // kStepOutput
  std::string output;  // kStepOutput; kItem: the KEY of ${item.KEY} (empty: ${item})
  std::string text;    // as written, e.g. "${inputs.who}"
};

// Every reference in every string of `value`; an error for malformed syntax
// ("${" without "}", an unknown root, a wrong shape).
Expected<std::vector<Reference>> findReferences(const Json& value);

struct SubstitutionContext {
  std::string workflow_name;
  Json inputs = Json::object();                // input name -> value
  std::map<std::string, Json> step_parameters;  // step id -> outputs.parameters object
  // The most bytes substitute() builds: a string being spliced, and the strings, names and
  // numbers of the whole value together (the config's args_limit).
  std::size_t limit = defaults::kArgsLimit;
};

// `value` with every reference replaced. Errors name the reference that cannot be
// resolved (e.g. an output the step did not produce), or the limit the value outgrew.
Expected<Json> substitute(const Json& value, const SubstitutionContext& context);

// True for a string holding a reference known only once the run goes on (a step output,
// an item, the workflow's status).
bool knownOnlyWhileRunning(const Json& value);

// `text` rebuilt: each reference replaced by what `reference` makes of it, the text
// between them ("$${" read as "${") by what `literal` makes of it. Errors: as
// findReferences().
Expected<std::string> rewriteReferences(
    std::string_view text, const std::function<std::string(const Reference&)>& reference,
    const std::function<std::string(std::string_view)>& literal);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_SUBSTITUTION_H_

// core/workflows/schema.h: checks a JSON value against the JSON Schema subset that plugin manifests
// use to describe their args.
//
// Supported keywords: type (a name or a list), properties, required,
// additionalProperties (boolean or schema), items, enum, const, minimum, maximum,
// exclusiveMinimum, exclusiveMaximum, minLength, maxLength, minItems, maxItems, allOf,
// if/then/else, pattern
// (ECMAScript syntax as RE2 reads it: matched in time linear in the value whatever the
// pattern; a pattern with lookaround or back references is ignored). Other keywords are
// ignored, so a richer schema never makes a valid value fail. Stateless; thread-safe.
#ifndef PLUGBOARD_CORE_WORKFLOWS_SCHEMA_H_
#define PLUGBOARD_CORE_WORKFLOWS_SCHEMA_H_

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace plugboard::core {

using Json = nlohmann::json;

// Returns one message per violation, each starting with the value's path (`where`, then
// ".member" and "[index]"). `unknown`, when given, marks values that cannot be checked
// yet (such as a reference to another step's output); they pass.
std::vector<std::string> checkSchema(const Json& value, const Json& schema,
                                     const std::string& where,
                                     const std::function<bool(const Json&)>& unknown = {});

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_SCHEMA_H_

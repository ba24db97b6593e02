// plugboard/host/arcaflow_schema.h: an Arcaflow type (the typed schema language of the
// Arcaflow SDKs: {"type_id": "object" | "ref" | "scope" | "string" | ...}) as the JSON
// Schema subset plugboard checks (core/workflows/schema.h). One home for both users: the
// atp deployer converts a plugin's step schemas with it, the Arcaflow workflow front end
// a workflow's `input` scope. Free functions; thread-safe.
#ifndef PLUGBOARD_HOST_ARCAFLOW_SCHEMA_H_
#define PLUGBOARD_HOST_ARCAFLOW_SCHEMA_H_

#include <nlohmann/json.hpp>

namespace plugboard::host {

using Json = nlohmann::json;

// A scope ({"root": ID, "objects": {...}}, as a plugin or a workflow writes it) as the
// type {"type_id": "scope", ...}, whatever members are missing.
Json arcaflowScopeType(const Json& scope);

// `type` within `scope` (whose objects `ref` names) as a JSON Schema: objects and refs
// -> properties + required (a property with a default is not required) +
// additionalProperties false; integers and floats also as numeric text; one_of as its
// required discriminator plus an if/then per type, so the chosen branch's fields are
// checked; {} for `any`. Recursive or very deep references become {} past a depth and a
// budget.
Json arcaflowSchema(const Json& type, const Json& scope, int depth = 0);

}  // namespace plugboard::host

#endif  // PLUGBOARD_HOST_ARCAFLOW_SCHEMA_H_

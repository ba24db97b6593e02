// deployers/atp/schema.h: an Arcaflow plugin's schema (the hello of the Arcaflow Transport
// Protocol) as a plugboard manifest (docs/arcaflow.md, "Mapping").
//
// One RPC per Arcaflow step, "arcaflow.<step id>", plus "template.execute" for the step
// the options name, or the only step; each RPC's "input" schema is the step's input scope
// converted to the JSON Schema subset plugboard checks (core/workflows/schema.h), its
// "output" the fields of the success outputs. Free functions; thread-safe.
#ifndef PLUGBOARD_DEPLOYERS_ATP_SCHEMA_H_
#define PLUGBOARD_DEPLOYERS_ATP_SCHEMA_H_

#include <set>
#include <string>

#include <plugboard/host/expected.h>
#include <plugboard/sdk.hpp>

namespace plugboard::atp_deployer {

inline constexpr const char* kRpcPrefix = "arcaflow.";

struct ManifestSpec {
  std::string name, version;          // the registry entry's
  std::string default_step;           // option 'step'; empty: the only step, if one
  std::set<std::string> success_ids;  // output ids that mean success
};

// The manifest for `schema` (the hello's "schema"). Errors: no steps, a step without an
// input scope, option 'step' naming no step.
host::Expected<Json> manifestOf(const Json& schema, const ManifestSpec& spec);

// An Arcaflow type ({"type_id": ...}) in `scope` as a JSON Schema
// (plugboard/host/arcaflow_schema.h, its one home).
Json convertType(const Json& type, const Json& scope, int depth = 0);

// The step an RPC of `manifest` runs: "arcaflow.x" -> "x", "template.execute" -> the
// default step; empty when the RPC is not the plugin's.
std::string stepOf(const Json& manifest, const std::string& rpc);

// Whether `step` of `manifest` declares a cancel signal handler.
bool cancellable(const Json& manifest, const std::string& step);

}  // namespace plugboard::atp_deployer

#endif  // PLUGBOARD_DEPLOYERS_ATP_SCHEMA_H_

// deployers/atp/schema.cc: see schema.h. The Arcaflow schema's shape is that of the Python
// SDK's schema.py (ScopeSchema, ObjectSchema, PropertySchema, the *Schema types by type_id).
#include "deployers/atp/schema.h"

#include <string>
#include <vector>

#include <plugboard/abi.h>
#include <plugboard/host/arcaflow_schema.h>
#include <plugboard/host/json_text.h>

namespace plugboard::atp_deployer {
namespace {

Json scopeType(const Json& scope) { return host::arcaflowScopeType(scope); }

const Json* member(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

Json convertType(const Json& type, const Json& scope, int depth) {
  return host::arcaflowSchema(type, scope, depth);
}

host::Expected<Json> manifestOf(const Json& schema, const ManifestSpec& spec) {
  const Json* steps = member(schema, "steps");
  if (steps == nullptr || !steps->is_object() || steps->empty())
    return host::Error("its schema declares no steps");
  std::string default_step = spec.default_step;
  if (default_step.empty() && steps->size() == 1) default_step = steps->begin().key();
  if (!default_step.empty() && !steps->contains(default_step)) {
    std::vector<std::string> ids;
    std::string list;
    for (const auto& [id, _] : steps->items()) list += (list.empty() ? "" : ", ") + id;
    return host::Error("option 'step' names step '" + default_step +
                       "', which it does not have (its steps: " + list + ")");
  }
  Json provides = Json::array();
  Json schemas = Json::object();
  Json arcaflow = Json::object();
  std::string list;
  for (const auto& [id, step] : steps->items()) {
    const Json* input = member(step, "input");
    if (input == nullptr || !input->is_object())
      return host::Error("its schema's step '" + id + "' has no input scope");
    Json in = convertType(scopeType(*input), *input);
    Json output_properties = {{"output_id", {{"type", "string"}}}};
    if (const Json* outputs = member(step, "outputs"); outputs != nullptr && outputs->is_object()) {
      for (const auto& [out_id, out] : outputs->items()) {
        if (!spec.success_ids.contains(out_id)) continue;
        const Json* scope = member(out, "schema");
        if (scope == nullptr) continue;
        Json converted = convertType(scopeType(*scope), *scope);
        if (converted.contains("properties")) {
          for (const auto& [field, _] : converted["properties"].items())
            output_properties[field] = Json::object();  // passed on as text
        }
      }
    }
    Json entry = {{"input", std::move(in)},
                  {"output", {{"type", "object"}, {"properties", std::move(output_properties)}}}};
    const std::string rpc = kRpcPrefix + id;
    provides.push_back(rpc);
    schemas[rpc] = entry;
    if (id == default_step) schemas["template.execute"] = entry;
    const Json* handlers = member(step, "signal_handlers");
    arcaflow[id] = {{"cancel", handlers != nullptr && handlers->contains("cancel")}};
    list += (list.empty() ? "" : ", ") + id;
  }
  if (!default_step.empty()) provides.push_back("template.execute");
  Json manifest = {{"kind", "executor"},
                   {"abi", PLUGBOARD_ABI_MAJOR},
                   {"name", spec.name},
                   {"version", spec.version},
                   {"provides", std::move(provides)},
                   {"schemas", std::move(schemas)},
                   {"description", "Arcaflow plugin (ATP) with steps: " + list},
                   {"arcaflow", {{"steps", std::move(arcaflow)}, {"default_step", default_step}}}};
  return manifest;
}

namespace {
const Json& stepsOf(const Json& manifest) {
  static const Json kNone = Json::object();
  const Json* arcaflow = member(manifest, "arcaflow");
  const Json* steps = arcaflow != nullptr ? member(*arcaflow, "steps") : nullptr;
  return steps != nullptr && steps->is_object() ? *steps : kNone;
}
}  // namespace

std::string stepOf(const Json& manifest, const std::string& rpc) {
  if (rpc == "template.execute") {
    const Json* arcaflow = member(manifest, "arcaflow");
    return arcaflow != nullptr ? arcaflow->value("default_step", std::string()) : std::string();
  }
  if (!rpc.starts_with(kRpcPrefix)) return {};
  std::string step = rpc.substr(std::string_view(kRpcPrefix).size());
  return stepsOf(manifest).contains(step) ? step : std::string();
}

bool cancellable(const Json& manifest, const std::string& step) {
  const Json& steps = stepsOf(manifest);
  auto it = steps.find(step);
  return it != steps.end() && it->is_object() && it->value("cancel", false);
}

}  // namespace plugboard::atp_deployer

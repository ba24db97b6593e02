// sdk/host/arcaflow_schema.cc: see plugboard/host/arcaflow_schema.h. The Arcaflow schema's
// shape is that of the Python SDK's schema.py (ScopeSchema, ObjectSchema, PropertySchema,
// the *Schema types by type_id).
#include "plugboard/host/arcaflow_schema.h"

#include <string>

#include "plugboard/host/json_text.h"

namespace plugboard::host {
namespace {

constexpr int kMaxDepth = 32;  // deeper (or recursive) references become {}
// The most types one conversion expands: references shared by many properties would
// otherwise expand exponentially; past it, types become {}.
constexpr int kMaxTypes = 20000;

const char* kIntegerText = "^-?[0-9]+$";
const char* kNumberText = "^-?[0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?$";

const Json* member(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

void copyNumber(const Json& from, const char* key, Json& to, const char* as) {
  if (const Json* v = member(from, key); v != nullptr && v->is_number()) to[as] = *v;
}

// Keys of an Arcaflow map (enum values, one_of types) as the values they stand for: an
// integer-keyed map arrives with its keys as decimal text.
Json keysOf(const Json& map, bool integers) {
  Json out = Json::array();
  if (!map.is_object()) return out;
  for (const auto& [key, _] : map.items()) {
    if (!integers) {
      out.push_back(key);
      continue;
    }
    try {
      std::size_t used = 0;
      const long long n = std::stoll(key, &used);
      if (used == key.size()) out.push_back(n);
    } catch (const std::exception&) {
      // not an integer: left out
    }
  }
  return out;
}

Json scopeTypeOf(const Json& scope) {
  const Json* objects = member(scope, "objects");
  const Json* root = member(scope, "root");
  return {{"type_id", "scope"},
          {"objects", objects != nullptr ? *objects : Json::object()},
          {"root", root != nullptr ? *root : Json()}};
}

Json convert(const Json& type, const Json& scope, int depth, int& budget);

Json convertObject(const Json& object, const Json& scope, int depth, int& budget) {
  Json out = {{"type", "object"}, {"additionalProperties", false}};
  Json properties = Json::object();
  Json required = Json::array();
  if (const Json* props = member(object, "properties"); props != nullptr && props->is_object()) {
    for (const auto& [name, property] : props->items()) {
      Json converted = Json::object();
      if (const Json* type = member(property, "type"))
        converted = convert(*type, scope, depth + 1, budget);
      if (const Json* display = member(property, "display")) {
        if (const Json* d = member(*display, "description"); d != nullptr && d->is_string())
          converted["description"] = *d;
      }
      const Json* def = member(property, "default");
      if (def != nullptr && def->is_string() && !jsonDeeperThan(def->get<std::string>())) {
        // Arcaflow's defaults are JSON text.
        Json value = Json::parse(def->get<std::string>(), nullptr, false);
        if (!value.is_discarded()) converted["default"] = std::move(value);
      }
      const Json* req = member(property, "required");
      // `required` defaults to true in the schema language (the Python SDK's
      // PropertySchema): a hand-written scope, as a workflow's input, often leaves it out.
      const bool needed = req == nullptr || !req->is_boolean() || req->get<bool>();
      if (needed && def == nullptr)
        required.push_back(name);
      properties[name] = std::move(converted);
    }
  }
  out["properties"] = std::move(properties);
  if (!required.empty()) out["required"] = std::move(required);
  return out;
}

Json convert(const Json& type, const Json& scope, int depth, int& budget) {
  if (depth > kMaxDepth || !type.is_object() || --budget < 0) return Json::object();
  const Json* id = member(type, "type_id");
  const std::string t = id != nullptr && id->is_string() ? id->get<std::string>() : "";
  Json out = Json::object();
  if (t == "string" || t == "pattern") {
    out["type"] = "string";
    copyNumber(type, "min", out, "minLength");
    copyNumber(type, "max", out, "maxLength");
    if (const Json* p = member(type, "pattern"); p != nullptr && p->is_string())
      out["pattern"] = *p;
  } else if (t == "integer" || t == "float") {
    // Arcaflow takes numbers as text too ("2" for 2), which is how step outputs arrive.
    out["type"] = Json::array({t == "integer" ? "integer" : "number", "string"});
    out["pattern"] = t == "integer" ? kIntegerText : kNumberText;
    copyNumber(type, "min", out, "minimum");
    copyNumber(type, "max", out, "maximum");
  } else if (t == "bool") {
    // The SDKs' words for true and false in any case, and the integers 1 and 0 (Go's
    // schema/bool.go, Python's BoolType.unserialize).
    out["type"] = Json::array({"boolean", "string", "integer"});
    out["pattern"] = "^(?i:true|false|yes|y|no|n|on|off|enable|enabled|disable|disabled|1|0)$";
    out["minimum"] = 0;
    out["maximum"] = 1;
  } else if (t == "enum_string" || t == "enum_integer") {
    if (const Json* values = member(type, "values"))
      out["enum"] = keysOf(*values, t == "enum_integer");
  } else if (t == "list") {
    out["type"] = "array";
    if (const Json* items = member(type, "items"))
      out["items"] = convert(*items, scope, depth + 1, budget);
    copyNumber(type, "min", out, "minItems");
    copyNumber(type, "max", out, "maxItems");
  } else if (t == "map") {
    out["type"] = "object";
    if (const Json* values = member(type, "values"))
      out["additionalProperties"] = convert(*values, scope, depth + 1, budget);
  } else if (t == "object") {
    out = convertObject(type, scope, depth, budget);
  } else if (t == "ref") {
    const Json* objects = member(scope, "objects");
    const Json* ref = member(type, "id");
    if (objects != nullptr && ref != nullptr && ref->is_string()) {
      if (const Json* object = member(*objects, ref->get<std::string>().c_str()))
        out = convertObject(*object, scope, depth, budget);
    }
  } else if (t == "scope") {
    const Json* objects = member(type, "objects");
    const Json* root = member(type, "root");
    if (objects != nullptr && root != nullptr && root->is_string()) {
      if (const Json* object = member(*objects, root->get<std::string>().c_str()))
        out = convertObject(*object, type, depth, budget);
    }
  } else if (t == "one_of_string" || t == "one_of_int") {
    // The discriminator (required, one of the types) chooses the branch whose fields are
    // checked: an "if" per type (the SDKs' OneOfSchema.unserialize). The discriminator is
    // a member of the branch's object whether the branch declares it (inlined) or not.
    const Json* field = member(type, "discriminator_field_name");
    const std::string name =
        field != nullptr && field->is_string() ? field->get<std::string>() : "_type";
    const bool integers = t == "one_of_int";
    out["type"] = "object";
    out["required"] = Json::array({name});
    if (const Json* types = member(type, "types"); types != nullptr && types->is_object()) {
      const Json keys = keysOf(*types, integers);
      out["properties"][name] = {{"enum", keys}};
      Json branches = Json::array();
      for (const Json& key : keys) {
        const std::string text = key.is_string() ? key.get<std::string>() : key.dump();
        Json branch = convert((*types)[text], scope, depth + 1, budget);
        if (branch.contains("properties") && !branch["properties"].contains(name))
          branch["properties"][name] = Json::object();
        branches.push_back({{"if", {{"properties", {{name, {{"const", key}}}}}, {"required", {name}}}},
                            {"then", std::move(branch)}});
      }
      if (!branches.empty()) out["allOf"] = std::move(branches);
    }
  }
  // "any", and type ids this version does not know: anything.
  return out;
}

}  // namespace

Json arcaflowScopeType(const Json& scope) { return scopeTypeOf(scope); }

Json arcaflowSchema(const Json& type, const Json& scope, int depth) {
  int budget = kMaxTypes;
  return convert(type, scope, depth, budget);
}

}  // namespace plugboard::host

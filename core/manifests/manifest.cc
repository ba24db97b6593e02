#include "core/manifests/manifest.h"

#include <algorithm>
#include <climits>
#include <optional>

#include <plugboard/host/json_text.h>

namespace plugboard::core {
namespace {

Expected<std::vector<std::string>> stringList(const Json& j, const char* member) {
  std::vector<std::string> out;
  auto it = j.find(member);
  if (it == j.end()) return out;
  if (!it->is_array()) return Error(std::string("manifest member '") + member + "' must be an array of strings");
  for (const auto& item : *it) {
    if (!item.is_string() || item.get_ref<const std::string&>().empty()) {
      return Error(std::string("manifest member '") + member +
                   "' must hold only non-empty strings, got " + item.dump());
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

Expected<std::string> optionalString(const Json& j, const char* member) {
  auto it = j.find(member);
  if (it == j.end()) return std::string();
  if (!it->is_string()) return Error(std::string("manifest member '") + member + "' must be a string");
  return it->get<std::string>();
}

// The value of an integer member that fits an int; nullopt for any other value, so that a
// larger number is refused rather than read as another one (2^32 + 1 is not 1).
std::optional<int> intValue(const Json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    return u <= INT_MAX ? std::optional<int>(static_cast<int>(u)) : std::nullopt;
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    return i >= INT_MIN && i <= INT_MAX ? std::optional<int>(static_cast<int>(i)) : std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

bool isValidPluginName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(name[0])) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
}

bool Manifest::providesRpc(std::string_view rpc) const {
  return std::find(provides.begin(), provides.end(), rpc) != provides.end();
}

bool isConfigType(std::string_view type) {
  for (const char* t : {"string", "integer", "boolean", "size", "duration", "string-list", "string-map", "object"}) {
    if (type == t) return true;
  }
  return false;
}

Json Manifest::toJson() const {
  Json j = {{"kind", kind},         {"name", name},
            {"version", version.text()}, {"abi", abi},
            {"provides", provides}, {"aliases", aliases},
            {"concurrency", concurrency == Concurrency::kSerial ? "serial" : "parallel"},
            {"description", description}};
  if (!schemas.empty()) j["schemas"] = schemas;
  if (polled) j["polled"] = *polled;
  if (kind == "deployer") {
    j["deploys"] = deploys;
    j["config"] = config;
    j["priority"] = priority;
    j["in_process"] = in_process;
  }
  return j;
}

Expected<Manifest> parseManifest(std::string_view text) {
  // The section holds the JSON and its terminating NUL.
  while (!text.empty() && text.back() == '\0') text.remove_suffix(1);
  if (text.find('\0') != std::string_view::npos) {
    return Error("the manifest section holds more than one manifest; link one plugin per .so");
  }
  if (host::jsonDeeperThan(text)) return Error("manifest is " + host::tooDeepText());
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error("manifest is not valid JSON");
  if (!j.is_object()) return Error("manifest is not a JSON object");

  Manifest m;
  m.text = std::string(text);

  auto kind = optionalString(j, "kind");
  if (!kind) return kind.error();
  if (*kind != "executor" && *kind != "deployer") {
    return Error("manifest member 'kind' must be \"executor\" or \"deployer\", got '" + *kind + "'");
  }
  m.kind = *kind;

  auto name = optionalString(j, "name");
  if (!name) return name.error();
  if (name->empty()) return Error("manifest has no 'name'");
  if (!isValidPluginName(*name)) {
    return Error("manifest name '" + *name +
                 "' is invalid: use letters, digits, '.', '_' and '-', starting with a letter or digit");
  }
  m.name = *name;

  auto version_text = optionalString(j, "version");
  if (!version_text) return version_text.error();
  if (version_text->empty()) return Error("manifest of '" + m.name + "' has no 'version'");
  auto version = Version::parse(*version_text);
  if (!version) return Error("manifest of '" + m.name + "': " + version.error().message());
  m.version = *version;

  auto abi = j.find("abi");
  const std::optional<int> abi_value = abi == j.end() ? std::nullopt : intValue(*abi);
  if (!abi_value) return Error("manifest of '" + m.name + "' has no integer 'abi'");
  m.abi = *abi_value;

  auto provides = stringList(j, "provides");
  if (!provides) return provides.error();
  m.provides = std::move(*provides);
  auto aliases = stringList(j, "aliases");
  if (!aliases) return aliases.error();
  for (const auto& alias : *aliases) {
    if (!isValidPluginName(alias)) return Error("manifest alias '" + alias + "' is not a valid name");
  }
  m.aliases = std::move(*aliases);

  auto concurrency = optionalString(j, "concurrency");
  if (!concurrency) return concurrency.error();
  if (*concurrency == "serial") {
    m.concurrency = Concurrency::kSerial;
  } else if (!concurrency->empty() && *concurrency != "parallel") {
    return Error("manifest member 'concurrency' must be \"parallel\" or \"serial\", got '" +
                 *concurrency + "'");
  }

  if (auto s = j.find("schemas"); s != j.end()) {
    if (!s->is_object()) return Error("manifest member 'schemas' must be an object");
    for (const auto& [rpc, schema] : s->items()) {
      if (!schema.is_object()) return Error("manifest schema for '" + rpc + "' must be an object");
      if (!m.providesRpc(rpc)) {
        return Error("manifest has a schema for '" + rpc + "', which 'provides' does not list");
      }
    }
    m.schemas = *s;
  }

  auto description = optionalString(j, "description");
  if (!description) return description.error();
  m.description = std::move(*description);

  auto deploys = stringList(j, "deploys");
  if (!deploys) return deploys.error();
  m.deploys = std::move(*deploys);
  if (m.kind == "deployer" && m.deploys.empty()) {
    return Error("manifest of deployer '" + m.name + "' has no 'deploys' (the artifact kinds it deploys)");
  }
  if (auto c = j.find("config"); c != j.end()) {
    if (!c->is_object()) return Error("manifest member 'config' must be an object");
    for (const auto& [key, spec] : c->items()) {
      auto type = spec.is_object() ? spec.find("type") : spec.end();
      if (!spec.is_object() || type == spec.end() || !type->is_string() ||
          !isConfigType(type->get_ref<const std::string&>())) {
        return Error("manifest config key '" + key +
                     "' must be an object with a 'type' of string, integer, boolean, size, duration, "
                     "string-list, string-map or object");
      }
    }
    m.config = *c;
  }
  if (auto p = j.find("priority"); p != j.end()) {
    const std::optional<int> priority = intValue(*p);
    if (!priority) return Error("manifest member 'priority' must be an integer");
    m.priority = *priority;
  }
  if (auto p = j.find("polled"); p != j.end()) {
    if (!p->is_boolean()) return Error("manifest member 'polled' must be true or false");
    m.polled = p->get<bool>();
  }
  if (auto p = j.find("in_process"); p != j.end()) {
    if (!p->is_boolean()) return Error("manifest member 'in_process' must be true or false");
    m.in_process = p->get<bool>();
  }
  return m;
}

bool sameManifest(const Manifest& a, const Manifest& b) {
  if (a.text == b.text) return true;
  const Json ja = Json::parse(a.text, nullptr, false), jb = Json::parse(b.text, nullptr, false);
  return !ja.is_discarded() && ja == jb;
}

}  // namespace plugboard::core

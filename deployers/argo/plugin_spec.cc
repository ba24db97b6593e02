#include "deployers/argo/plugin_spec.h"

#include <yaml.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include <plugboard/host/containment.h>

namespace plugboard::argo_deployer {

namespace {

using host::Error;
using host::Expected;

std::string where(const yaml_mark_t& mark) {
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

Json scalar(const yaml_event_t& e) {
  std::string text(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
  if (!e.data.scalar.plain_implicit) return text;  // quoted, or a block scalar
  if (text == "true" || text == "True") return true;
  if (text == "false" || text == "False") return false;
  if (text == "null" || text == "~" || text.empty()) return nullptr;
  if (text.find_first_not_of("0123456789") == std::string::npos && text.size() < 18)
    return std::stoll(text);
  if (text.size() > 1 && text[0] == '-' &&
      text.find_first_not_of("0123456789", 1) == std::string::npos && text.size() < 18)
    return std::stoll(text);
  return text;
}

// Names the member at `path` in errors.
std::string member(const std::string& path) { return path.empty() ? "the manifest" : path; }

const Json* find(const Json& object, const std::string& key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

Expected<std::string> text(const Json& object, const std::string& key, const std::string& path,
                           bool required) {
  const Json* v = find(object, key);
  if (v == nullptr) {
    if (required) return Error(path + key + " is missing");
    return std::string();
  }
  if (v->is_string()) return v->get<std::string>();
  if (v->is_number_integer()) return v->dump();
  return Error(path + key + " must be a string");
}

Expected<std::vector<std::string>> strings(const Json& object, const std::string& key,
                                           const std::string& path) {
  std::vector<std::string> out;
  const Json* v = find(object, key);
  if (v == nullptr) return out;
  if (!v->is_array()) return Error(path + key + " must be a list of strings");
  for (const auto& item : *v) {
    if (item.is_string()) {
      out.push_back(item.get<std::string>());
    } else if (item.is_number() || item.is_boolean()) {
      out.push_back(item.dump());
    } else {
      return Error(path + key + " must be a list of strings");
    }
  }
  return out;
}

// Reads spec.sidecar.container (`c`, at `path`) into `s`.
host::Status readContainer(const Json& c, const std::string& path, SidecarSpec& s) {
  if (!c.is_object()) return Error(member(path) + " must be a mapping");
  auto name = text(c, "name", path, false);
  auto image = text(c, "image", path, true);
  auto pull = text(c, "imagePullPolicy", path, false);
  auto workdir = text(c, "workingDir", path, false);
  auto command = strings(c, "command", path);
  auto args = strings(c, "args", path);
  for (const auto* e : {&name, &image, &pull, &workdir}) {
    if (!*e) return e->error();
  }
  if (!command) return command.error();
  if (!args) return args.error();
  if (image->empty()) return Error(path + "image is empty");
  if (host::Status st = host::checkImageReference(*image); !st)
    return Error(path + "image: " + st.error().message());
  s.container_name = name->empty() ? s.name + "-executor-plugin" : *name;
  s.image = *image;
  s.pull_policy = *pull;
  s.working_dir = *workdir;
  s.command = std::move(*command);
  s.args = std::move(*args);

  const Json* ports = find(c, "ports");
  if (ports == nullptr || !ports->is_array() || ports->empty())
    return Error(path + "ports: at least one port is mandatory");
  const Json* port = find((*ports)[0], "containerPort");
  if (port == nullptr || !port->is_number_integer() || port->get<long long>() < 1 ||
      port->get<long long>() > 65535)
    return Error(path + "ports[0].containerPort must be a port number, 1 to 65535");
  s.port = port->get<int>();

  if (const Json* env = find(c, "env"); env != nullptr) {
    if (!env->is_array()) return Error(path + "env must be a list");
    for (const auto& e : *env) {
      const Json* n = find(e, "name");
      if (n == nullptr || !n->is_string()) return Error(path + "env: an entry has no name");
      if (find(e, "valueFrom") != nullptr) {
        s.env_from.push_back(n->get<std::string>());
        continue;
      }
      auto value = text(e, "value", path + "env." + n->get<std::string>() + ".", false);
      if (!value) return value.error();
      s.env.emplace_back(n->get<std::string>(), *value);
    }
  }

  const Json* resources = find(c, "resources");
  if (resources == nullptr || find(*resources, "requests") == nullptr)
    return Error(path + "resources.requests: resources requests are mandatory");
  const Json* limits = find(*resources, "limits");
  if (limits == nullptr) return Error(path + "resources.limits: resources limits are mandatory");
  if (const Json* memory = find(*limits, "memory"); memory != nullptr) {
    auto bytes = memoryBytes(*memory);
    if (!bytes) return Error(path + "resources.limits.memory: " + bytes.error().message());
    s.memory = *bytes;
  }
  if (const Json* cpu = find(*limits, "cpu"); cpu != nullptr) {
    auto cpus = cpuCount(*cpu);
    if (!cpus) return Error(path + "resources.limits.cpu: " + cpus.error().message());
    s.cpus = *cpus;
  }

  const Json* security = find(c, "securityContext");
  if (security == nullptr || !security->is_object())
    return Error(path + "securityContext: security context is mandatory");
  // What it asks for is checked against the ceiling the runtime gives (Sidecar).
  s.security_context = *security;
  return host::Status::Ok();
}

}  // namespace

Expected<Json> yamlToJson(std::string_view yaml_text) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return Error("out of memory reading YAML");
  std::unique_ptr<yaml_parser_t, void (*)(yaml_parser_t*)> owned(&parser, yaml_parser_delete);
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(yaml_text.data()),
                               yaml_text.size());
  Json root;
  bool have_root = false;
  // Open collections; for mappings, the key waiting for its value.
  std::vector<std::pair<Json*, std::optional<std::string>>> stack;
  const auto place = [&](Json value) -> Json* {
    if (stack.empty()) {
      root = std::move(value);
      have_root = true;
      return &root;
    }
    auto& [parent, key] = stack.back();
    if (parent->is_array()) {
      parent->push_back(std::move(value));
      return &parent->back();
    }
    Json* slot = &((*parent)[*key] = std::move(value));
    key.reset();
    return slot;
  };
  for (;;) {
    yaml_event_t e;
    if (!yaml_parser_parse(&parser, &e)) {
      return Error(std::string("not valid YAML: ") + (parser.problem ? parser.problem : "?") +
                   " at " + where(parser.problem_mark));
    }
    std::unique_ptr<yaml_event_t, void (*)(yaml_event_t*)> event(&e, yaml_event_delete);
    switch (e.type) {
      case YAML_STREAM_END_EVENT:
        if (!have_root) return Error("the YAML holds no document");
        return root;
      case YAML_DOCUMENT_START_EVENT:
        if (have_root)
          return Error("the YAML holds more than one document (" + where(e.start_mark) + ")");
        break;
      case YAML_ALIAS_EVENT:
        return Error("YAML aliases are not supported (" + where(e.start_mark) + ")");
      case YAML_SCALAR_EVENT: {
        if (!stack.empty() && stack.back().first->is_object() && !stack.back().second) {
          stack.back().second =
              std::string(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
        } else {
          place(scalar(e));
        }
        break;
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        if (!stack.empty() && stack.back().first->is_object() && !stack.back().second)
          return Error("a mapping key that is not a scalar (" + where(e.start_mark) + ")");
        if (stack.size() > 64)
          return Error("the YAML nests too deep (" + where(e.start_mark) + ")");
        Json* made = place(e.type == YAML_SEQUENCE_START_EVENT ? Json::array() : Json::object());
        stack.emplace_back(made, std::nullopt);
        break;
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        stack.pop_back();
        break;
      default:
        break;
    }
  }
}

Expected<std::string> memoryBytes(const Json& quantity) {
  const std::string q = quantity.is_string()   ? quantity.get<std::string>()
                        : quantity.is_number() ? quantity.dump()
                                               : "";
  static const std::pair<const char*, double> kUnits[] = {
      {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
      {"k", 1e3},     {"M", 1e6},        {"G", 1e9},           {"T", 1e12},
      {"", 1}};
  for (const auto& [suffix, factor] : kUnits) {
    const std::string_view s(suffix);
    if (q.size() <= s.size() || q.compare(q.size() - s.size(), s.size(), s) != 0) continue;
    const std::string number = q.substr(0, q.size() - s.size());
    char* end = nullptr;
    const double n = std::strtod(number.c_str(), &end);
    if (end == number.c_str() || *end != '\0' || !(n > 0)) break;
    char out[32];
    std::snprintf(out, sizeof out, "%.0f", std::ceil(n * factor));
    return std::string(out);
  }
  return Error("'" + q + "' is not a memory quantity such as 128Mi, 1Gi or 500M");
}

Expected<std::string> cpuCount(const Json& quantity) {
  std::string q = quantity.is_string()   ? quantity.get<std::string>()
                  : quantity.is_number() ? quantity.dump()
                                         : "";
  double divisor = 1;
  if (!q.empty() && q.back() == 'm') {
    q.pop_back();
    divisor = 1000;
  }
  char* end = nullptr;
  const double n = std::strtod(q.c_str(), &end);
  if (q.empty() || end == q.c_str() || *end != '\0' || !(n > 0))
    return Error("not a CPU quantity such as 500m or 2");
  char out[32];
  std::snprintf(out, sizeof out, "%g", n / divisor);
  return std::string(out);
}

Expected<SidecarSpec> readExecutorPlugin(std::string_view yaml_text) {
  auto doc = yamlToJson(yaml_text);
  if (!doc) return doc.error();
  if (!doc->is_object()) return Error("not an ExecutorPlugin manifest: not a YAML mapping");
  const std::string kind = doc->value("kind", std::string());
  const Json* metadata = find(*doc, "metadata");
  SidecarSpec s;
  Json container;
  std::string path;
  const Json* annotations = metadata ? find(*metadata, "annotations") : nullptr;
  if (kind == "ExecutorPlugin") {
    auto name = metadata ? text(*metadata, "name", "metadata.", true)
                         : Expected<std::string>(Error("metadata.name is missing"));
    if (!name) return name.error();
    s.name = *name;
    const Json* spec = find(*doc, "spec");
    const Json* sidecar = spec ? find(*spec, "sidecar") : nullptr;
    const Json* c = sidecar ? find(*sidecar, "container") : nullptr;
    if (c == nullptr) return Error("spec.sidecar.container is missing");
    container = *c;
    path = "spec.sidecar.container.";
  } else if (kind == "ConfigMap") {
    const Json* labels = metadata ? find(*metadata, "labels") : nullptr;
    const Json* type = labels ? find(*labels, "workflows.argoproj.io/configmap-type") : nullptr;
    if (type == nullptr || *type != "ExecutorPlugin") {
      return Error(
          "not an ExecutorPlugin: a ConfigMap without the label "
          "workflows.argoproj.io/configmap-type: ExecutorPlugin");
    }
    auto name = text(*metadata, "name", "metadata.", true);
    if (!name) return name.error();
    // FromConfigMap (workflow/util/plugin/configmap.go): the plugin is the map's name
    // without the suffix `argo executor-plugin build` adds.
    s.name = *name;
    s.from_config_map = true;
    if (s.name.ends_with("-executor-plugin")) s.name.resize(s.name.size() - 16);
    const Json* data = find(*doc, "data");
    const Json* text_of_container = data ? find(*data, "sidecar.container") : nullptr;
    if (text_of_container == nullptr || !text_of_container->is_string())
      return Error("data.sidecar.container is missing");
    auto c = yamlToJson(text_of_container->get<std::string>());
    if (!c) return Error("data.sidecar.container: " + c.error().message());
    container = std::move(*c);
    path = "data.sidecar.container: ";
  } else {
    return Error(
        "not an ExecutorPlugin manifest: kind is '" + kind +
        "', expected ExecutorPlugin (or the ConfigMap `argo executor-plugin build` writes)");
  }
  if (s.name.empty()) return Error("metadata.name is empty");
  if (annotations != nullptr) {
    if (const Json* v = find(*annotations, "plugboard/version"); v != nullptr && v->is_string())
      s.version = v->get<std::string>();
    if (const Json* v = find(*annotations, "workflows.argoproj.io/description");
        v != nullptr && v->is_string())
      s.description = v->get<std::string>();
  }
  if (host::Status st = readContainer(container, path, s); !st) return st.error();
  while (!s.description.empty() && (s.description.back() == '\n' || s.description.back() == ' '))
    s.description.pop_back();
  return s;
}

}  // namespace plugboard::argo_deployer

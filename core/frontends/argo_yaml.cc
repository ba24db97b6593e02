#include "core/frontends/argo_yaml.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <utility>

namespace plugboard::core::argo {

namespace {

bool plain(const YAML::Node& node) { return node.Tag() == "?"; }

std::optional<long long> wholeNumber(const std::string& text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  size_t digits = text[0] == '-' || text[0] == '+' ? 1 : 0;
  if (digits == text.size() || text.find_first_not_of("0123456789", digits) != std::string::npos)
    return std::nullopt;
  return std::stoll(text);
}

std::optional<double> realNumber(const std::string& text) {
  if (text.empty() || text.find_first_of("0123456789") == std::string::npos) return std::nullopt;
  if (text.find_first_not_of("0123456789+-.eE") != std::string::npos) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

YAML::Node member(const YAML::Node& node, const std::string& key) {
  if (!node.IsDefined() || !node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  // The keys compared as the text they are: yaml-cpp's own lookup converts each key it
  // passes through a string stream, most of a large file's reading time.
  for (const auto& kv : node) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

namespace {

// How deep and how large one value may be: an alias that contains itself (`&a [*a]`)
// would recurse for ever, and aliases of aliases multiply a small file into a huge tree
// (go-yaml, which Argo reads with, refuses both too).
constexpr int kMaxDepth = 128;
constexpr long kMaxNodes = 1'000'000;

Json toJsonWithin(const YAML::Node& node, int depth, long& nodes) {
  if (depth > kMaxDepth || ++nodes > kMaxNodes) {
    throw YAML::Exception(node.Mark(),
                          depth > kMaxDepth
                              ? "nested deeper than 128 levels (an alias that contains itself?)"
                              : "more than a million values (aliases of aliases?)");
  }
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const auto& item : node) out.push_back(toJsonWithin(item, depth + 1, nodes));
      return out;
    }
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : node)
        out[kv.first.Scalar()] = toJsonWithin(kv.second, depth + 1, nodes);
      return out;
    }
    case YAML::NodeType::Scalar:
      break;
  }
  const std::string& text = node.Scalar();
  if (!plain(node)) return text;
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  if (text == "null" || text == "Null" || text == "NULL" || text == "~") return nullptr;
  if (auto n = wholeNumber(text)) return *n;
  if (auto d = realNumber(text)) return *d;
  return text;
}

}  // namespace

Json toJson(const YAML::Node& node) {
  long nodes = 0;
  return toJsonWithin(node, 0, nodes);
}

SourceRef ArgoYaml::at(const YAML::Mark& mark) const {
  SourceRef ref{file_, 0, 0};
  if (!mark.is_null()) {
    ref.line = mark.line + 1;
    ref.column = mark.column + 1;
  }
  return ref;
}

SourceRef ArgoYaml::at(const YAML::Node& node) const {
  return node.IsDefined() ? at(node.Mark()) : SourceRef{file_, 0, 0};
}

void ArgoYaml::problem(const SourceRef& where, const std::string& subject, std::string message) {
  problems_->push_back(ModelProblem{where, subject, std::move(message)});
}

bool ArgoYaml::checkFields(const YAML::Node& node, const std::string& path,
                           const std::string& subject, const FieldRules& rules) {
  if (!node.IsMap()) {
    problem(node, subject, path + " must be a mapping");
    return false;
  }
  auto in = [](std::initializer_list<std::string_view> set, const std::string& key) {
    return std::find(set.begin(), set.end(), key) != set.end();
  };
  for (const auto& kv : node) {
    const std::string& key = kv.first.Scalar();
    if (in(rules.read, key) || in(rules.accepted, key)) continue;
    std::string field = path.empty() ? key : path + "." + key;
    std::string_view reason = refusalReason(key);
    problem(at(kv.first.Mark()), subject,
            reason.empty() ? field + ": not supported (unknown to plugboard's Argo front end)"
                           : field + ": not supported: " + std::string(reason));
  }
  return true;
}

std::string ArgoYaml::text(const YAML::Node& parent, const char* key, const std::string& path,
                           const std::string& subject) {
  const YAML::Node n = member(parent, key);
  if (!n.IsDefined() || n.IsNull()) return "";
  if (!n.IsScalar()) {
    problem(n, subject, path + "." + key + " must be a string");
    return "";
  }
  return n.Scalar();
}

std::optional<long long> ArgoYaml::integer(const YAML::Node& parent, const char* key,
                                           const std::string& path, const std::string& subject) {
  const YAML::Node n = member(parent, key);
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  std::optional<long long> v = n.IsScalar() ? wholeNumber(n.Scalar()) : std::nullopt;
  if (!v) problem(n, subject, path + "." + key + " must be a whole number");
  return v;
}

std::optional<bool> ArgoYaml::boolean(const YAML::Node& parent, const char* key,
                                      const std::string& path, const std::string& subject) {
  const YAML::Node n = member(parent, key);
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  Json v = n.IsScalar() ? toJson(n) : Json();
  if (!v.is_boolean()) {
    problem(n, subject, path + "." + key + " must be true or false");
    return std::nullopt;
  }
  return v.get<bool>();
}

std::vector<std::string> ArgoYaml::strings(const YAML::Node& parent, const char* key,
                                           const std::string& path, const std::string& subject) {
  std::vector<std::string> out;
  const YAML::Node n = list(parent, key, path, subject);
  for (const auto& item : n) {
    if (item.IsScalar()) {
      out.push_back(item.Scalar());
    } else {
      problem(item, subject, path + "." + key + " must be a list of strings");
    }
  }
  return out;
}

YAML::Node ArgoYaml::list(const YAML::Node& parent, const char* key, const std::string& path,
                          const std::string& subject) {
  const YAML::Node n = member(parent, key);
  if (!n.IsDefined() || n.IsNull()) return YAML::Node(YAML::NodeType::Sequence);
  if (!n.IsSequence()) {
    problem(n, subject, path + "." + key + " must be a list");
    return YAML::Node(YAML::NodeType::Sequence);
  }
  return n;
}

bool exitHook(ArgoYaml& yaml, const YAML::Node& hooks, const std::string& path,
              const std::string& subject) {
  if (!hooks.IsDefined() || hooks.IsNull()) return false;
  if (!hooks.IsMap()) {
    yaml.problem(hooks, subject, path + " must be a mapping");
    return false;
  }
  bool exit = false;
  for (const auto& kv : hooks) {
    if (kv.first.Scalar() == "exit") {
      exit = true;
    } else {
      yaml.problem(yaml.at(kv.first.Mark()), subject,
                   path + "." + kv.first.Scalar() +
                       ": not supported: hooks run on an expression are not run; only `exit`");
    }
  }
  return exit;
}

std::string_view refusalReason(std::string_view field) {
  static const std::pair<std::string_view, std::string_view> kReasons[] = {
      {"artifacts", "artifacts (S3, git, HTTP, ...) are not passed between steps"},
      {"archiveLocation", "artifacts are not archived"},
      {"artifactRepositoryRef", "artifacts are not archived"},
      {"artifactGC", "artifacts are not archived"},
      {"volumes", "volumes are not mounted"},
      {"volumeMounts", "volumes are not mounted"},
      {"volumeDevices", "volumes are not mounted"},
      {"volumeClaimTemplates", "volumes are not mounted"},
      {"resource", "Kubernetes resource templates need a cluster"},
      {"containerSet", "several containers in one pod are not run"},
      {"data", "data templates read artifacts"},
      {"http", "HTTP templates are not run"},
      {"daemon", "daemon steps are not run"},
      {"sidecars", "sidecar containers are not run"},
      {"initContainers", "init containers are not run"},
      {"synchronization", "mutexes and semaphores need a cluster"},
      {"podSpecPatch", "there is no pod to patch"},
      {"memoize", "results are not memoized"},
      {"metrics", "Prometheus metrics are not emitted"},
      {"templateDefaults", "template defaults are not applied"},
      {"retryStrategy", "a workflow-wide retry strategy is not applied"},
      {"suspend", "a workflow created suspended is not run"},
      {"shutdown", "a workflow created shut down is not run"},
      {"hostNetwork", "containers run without the host's network"},
      {"hostAliases", "containers' /etc/hosts is not changed"},
      {"resourceClaims", "dynamic resource claims need a cluster"},
      {"envFrom", "environment from ConfigMaps and Secrets needs a cluster"},
      {"valueFrom", "values from ConfigMaps, Secrets and events need a cluster"},
      {"livenessProbe", "probes are not run"},
      {"readinessProbe", "probes are not run"},
      {"startupProbe", "probes are not run"},
      {"lifecycle", "container lifecycle hooks are not run"},
      {"stdin", "containers run without stdin"},
      {"stdinOnce", "containers run without stdin"},
      {"tty", "containers run without a terminal"},
      {"jsonPath", "resource templates are not run"},
      {"jqFilter", "resource templates are not run"},
      {"event", "event-supplied values need Argo Events"},
      {"configMapKeyRef", "ConfigMaps need a cluster"},
      {"exitCode", "outputs.exitCode is set by the run, not written in a template"},
      {"result", "outputs.result is set by the run, not written in a template"},
  };
  for (const auto& [name, reason] : kReasons) {
    if (name == field) return reason;
  }
  return {};
}

}  // namespace plugboard::core::argo

#include "core/frontends/argo_yaml.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <utility>

namespace plugboard::core::argo {

namespace {

std::optional<long long> wholeNumber(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  size_t digits = text[0] == '-' || text[0] == '+' ? 1 : 0;
  if (digits == text.size() || text.find_first_not_of("0123456789", digits) != std::string::npos)
    return std::nullopt;
  return std::stoll(std::string(text));
}

std::optional<double> realNumber(std::string_view view) {
  if (view.empty() || view.find_first_of("0123456789") == std::string::npos) return std::nullopt;
  if (view.find_first_not_of("0123456789+-.eE") != std::string::npos) return std::nullopt;
  std::string text(view);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

// How deep and how large one value may be: an alias that contains itself (`&a [*a]`)
// would recurse for ever, and aliases of aliases multiply a small file into a huge tree
// (go-yaml, which Argo reads with, refuses both too).
constexpr int kMaxDepth = 128;
constexpr long kMaxNodes = 1'000'000;

Json toJsonWithin(const yaml::Node& node, int depth, long& nodes) {
  if (depth > kMaxDepth || ++nodes > kMaxNodes) {
    throw yaml::TreeLimit{node.mark(),
                          depth > kMaxDepth
                              ? "nested deeper than 128 levels (an alias that contains itself?)"
                              : "more than a million values (aliases of aliases?)"};
  }
  switch (node.type()) {
    case yaml::Node::Type::kUndefined:
    case yaml::Node::Type::kNull:
      return nullptr;
    case yaml::Node::Type::kSequence: {
      Json out = Json::array();
      for (yaml::Node item : node.items()) out.push_back(toJsonWithin(item, depth + 1, nodes));
      return out;
    }
    case yaml::Node::Type::kMap: {
      Json out = Json::object();
      for (const auto& kv : node.pairs())
        out[kv.key.text()] = toJsonWithin(kv.value, depth + 1, nodes);
      return out;
    }
    case yaml::Node::Type::kScalar:
      break;
  }
  std::string_view text = node.scalar();
  if (!node.plain()) return text;
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  if (text == "null" || text == "Null" || text == "NULL" || text == "~") return nullptr;
  if (auto n = wholeNumber(text)) return *n;
  if (auto d = realNumber(text)) return *d;
  return text;
}

}  // namespace

Json toJson(const yaml::Node& node) {
  long nodes = 0;
  return toJsonWithin(node, 0, nodes);
}

std::vector<yaml::Document> ArgoYaml::documents(std::string_view text) {
  yaml::Tree::Parsed parsed = tree_.parse(text);
  if (parsed.error) {
    problem(at(parsed.error->mark), "",
            (parsed.error->syntax ? "YAML syntax error: " : "") + parsed.error->message);
    return {};
  }
  std::vector<yaml::Document> out;
  for (auto& doc : parsed.documents) {
    if (doc.refused || (doc.root.isDefined() && !doc.root.isNull())) out.push_back(std::move(doc));
  }
  return out;
}

SourceRef ArgoYaml::at(const yaml::Mark& mark) const {
  SourceRef ref{file_, 0, 0};
  if (!mark.isNull()) {
    ref.line = mark.line + 1;
    ref.column = mark.column + 1;
  }
  return ref;
}

SourceRef ArgoYaml::at(const yaml::Node& node) const {
  return node.isDefined() ? at(node.mark()) : SourceRef{file_, 0, 0};
}

void ArgoYaml::problem(const SourceRef& where, const std::string& subject, std::string message) {
  problems_->push_back(ModelProblem{where, subject, std::move(message)});
}

bool ArgoYaml::checkFields(const yaml::Node& node, const std::string& path,
                           const std::string& subject, const FieldRules& rules) {
  if (!node.isMap()) {
    problem(node, subject, path + " must be a mapping");
    return false;
  }
  auto in = [](std::initializer_list<std::string_view> set, std::string_view key) {
    return std::find(set.begin(), set.end(), key) != set.end();
  };
  for (const auto& kv : node.pairs()) {
    std::string_view key = kv.key.scalar();
    if (in(rules.read, key) || in(rules.accepted, key)) continue;
    std::string field = path.empty() ? std::string(key) : path + "." + std::string(key);
    std::string_view reason = refusalReason(key);
    problem(at(kv.key.mark()), subject,
            reason.empty() ? field + ": not supported (unknown to plugboard's Argo front end)"
                           : field + ": not supported: " + std::string(reason));
  }
  return true;
}

std::string ArgoYaml::text(const yaml::Node& parent, const char* key, const std::string& path,
                           const std::string& subject) {
  const yaml::Node n = member(parent, key);
  if (!n.isDefined() || n.isNull()) return "";
  if (!n.isScalar()) {
    problem(n, subject, path + "." + key + " must be a string");
    return "";
  }
  return n.text();
}

std::optional<long long> ArgoYaml::integer(const yaml::Node& parent, const char* key,
                                           const std::string& path, const std::string& subject) {
  const yaml::Node n = member(parent, key);
  if (!n.isDefined() || n.isNull()) return std::nullopt;
  std::optional<long long> v = n.isScalar() ? wholeNumber(n.text()) : std::nullopt;
  if (!v) problem(n, subject, path + "." + key + " must be a whole number");
  return v;
}

std::optional<bool> ArgoYaml::boolean(const yaml::Node& parent, const char* key,
                                      const std::string& path, const std::string& subject) {
  const yaml::Node n = member(parent, key);
  if (!n.isDefined() || n.isNull()) return std::nullopt;
  Json v = n.isScalar() ? toJson(n) : Json();
  if (!v.is_boolean()) {
    problem(n, subject, path + "." + key + " must be true or false");
    return std::nullopt;
  }
  return v.get<bool>();
}

std::vector<std::string> ArgoYaml::strings(const yaml::Node& parent, const char* key,
                                           const std::string& path, const std::string& subject) {
  std::vector<std::string> out;
  const yaml::Node n = list(parent, key, path, subject);
  for (yaml::Node item : n.items()) {
    if (item.isScalar()) {
      out.push_back(item.text());
    } else {
      problem(item, subject, path + "." + key + " must be a list of strings");
    }
  }
  return out;
}

yaml::Node ArgoYaml::list(const yaml::Node& parent, const char* key, const std::string& path,
                          const std::string& subject) {
  const yaml::Node n = member(parent, key);
  if (!n.isDefined() || n.isNull()) return yaml::Node();
  if (!n.isSequence()) {
    problem(n, subject, path + "." + key + " must be a list");
    return yaml::Node();
  }
  return n;
}

bool exitHook(ArgoYaml& yaml, const yaml::Node& hooks, const std::string& path,
              const std::string& subject) {
  if (!hooks.isDefined() || hooks.isNull()) return false;
  if (!hooks.isMap()) {
    yaml.problem(hooks, subject, path + " must be a mapping");
    return false;
  }
  bool exit = false;
  for (const auto& kv : hooks.pairs()) {
    if (kv.key.scalar() == "exit") {
      exit = true;
    } else {
      yaml.problem(yaml.at(kv.key.mark()), subject,
                   path + "." + kv.key.text() +
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

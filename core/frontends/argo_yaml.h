// core/frontends/argo_yaml.h: reading one Argo YAML file (yaml_tree.h), keeping where each
// node was written. Internal to core/frontends (the Argo reader's helpers); not part of
// its interface. Not thread-safe: one ArgoYaml per file being read.
#ifndef PLUGBOARD_CORE_FRONTENDS_ARGO_YAML_H_
#define PLUGBOARD_CORE_FRONTENDS_ARGO_YAML_H_

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/text.h"
#include "core/frontends/yaml_tree.h"
#include "core/workflows/model.h"

namespace plugboard::core::argo {

// The member `key` of mapping `node`; an undefined node when `node` is not a mapping or
// has no such member.
inline yaml::Node member(const yaml::Node& node, std::string_view key) { return node.member(key); }

// A YAML node as JSON: mappings, sequences, and plain scalars typed as YAML 1.1 does
// (true/false, null, integers, floats); a quoted or block scalar stays a string. Throws
// yaml::TreeLimit (with the node's mark) past 128 levels or a million values.
Json toJson(const yaml::Node& node);

// The fields of one kind of Argo object, as plugboard treats them.
struct FieldRules {
  std::initializer_list<std::string_view> read;      // the reader takes these
  std::initializer_list<std::string_view> accepted;  // no effect on one machine; allowed
  // Anything else is refused: Argo's fields the model cannot honour name what is missing,
  // a key Argo does not know either is an unknown field (argo lint is strict too).
};

class ArgoYaml {
 public:
  ArgoYaml(std::string file, std::vector<ModelProblem>* problems)
      : file_(std::move(file)), problems_(problems) {}

  const std::string& file() const { return file_; }
  // The non-empty documents of `text`, the file's; their nodes belong to this ArgoYaml.
  // A syntax error is a problem on its line (and there are none). A document refused
  // (yaml_tree.h) is returned with its reason, for the caller to report if it reads it.
  std::vector<yaml::Document> documents(std::string_view text);
  // A problem for a refused document.
  void problem(const yaml::Error& refused) { problem(at(refused.mark), "", refused.message); }

  SourceRef at(const yaml::Node& node) const;
  SourceRef at(const yaml::Mark& mark) const;
  void problem(const SourceRef& where, const std::string& subject, std::string message);
  void problem(const yaml::Node& node, const std::string& subject, std::string message) {
    problem(at(node), subject, std::move(message));
  }

  // Checks the keys of mapping `node` (at `path`, e.g. "templates.main.container")
  // against `rules`; a node that is not a mapping is a problem. Returns false then.
  bool checkFields(const yaml::Node& node, const std::string& path, const std::string& subject,
                   const FieldRules& rules);
  // A scalar member as text ("" when absent); a mapping or list there is a problem.
  std::string text(const yaml::Node& parent, const char* key, const std::string& path,
                   const std::string& subject);
  // A scalar member as a whole number; absent: nullopt; not a number: a problem.
  std::optional<long long> integer(const yaml::Node& parent, const char* key,
                                   const std::string& path, const std::string& subject);
  std::optional<bool> boolean(const yaml::Node& parent, const char* key, const std::string& path,
                              const std::string& subject);
  // A list member of scalars as text.
  std::vector<std::string> strings(const yaml::Node& parent, const char* key,
                                   const std::string& path, const std::string& subject);
  // A list member ([] when absent); anything else there is a problem.
  yaml::Node list(const yaml::Node& parent, const char* key, const std::string& path,
                  const std::string& subject);

 private:
  SourceFile file_;  // interned once: every element's SourceRef shares it
  std::vector<ModelProblem>* problems_;
  yaml::Tree tree_;
};

// 'text', as messages name things.
// Control characters escaped and a long text cut (core::excerpt): a problem stays one line.
inline std::string quote(const std::string& text) { return "'" + excerpt(text, 256) + "'"; }

// True when `hooks` (Argo's LifecycleHooks at `path`) has an `exit` hook; every other
// hook (run on an expression) is refused, each by name.
bool exitHook(ArgoYaml& yaml, const yaml::Node& hooks, const std::string& path,
              const std::string& subject);

// Why plugboard refuses an Argo field, when there is more to say than its name.
std::string_view refusalReason(std::string_view field);

}  // namespace plugboard::core::argo

#endif  // PLUGBOARD_CORE_FRONTENDS_ARGO_YAML_H_

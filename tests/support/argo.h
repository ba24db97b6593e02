// tests/support/argo.h: Argo's ExecuteTemplateArgs, as its agent sends them, and Argo
// Workflow files, for tests.
#ifndef PLUGBOARD_TESTS_SUPPORT_ARGO_H_
#define PLUGBOARD_TESTS_SUPPORT_ARGO_H_

#include <string>

#include <nlohmann/json.hpp>

namespace plugboard::testing {

// A template for plugin `key` with `args`, in a workflow named "wf".
inline std::string argoBody(const std::string& key, const nlohmann::json& args) {
  return nlohmann::json{
      {"workflow", {{"metadata", {{"name", "wf"}, {"namespace", "argo"}, {"uid", "1"}}}}},
      {"template", {{"name", "t"}, {"plugin", {{key, args}}}}}}
      .dump();
}

// An Argo Workflow named "wf" whose entrypoint is template `main`: `templates` is its YAML
// below `- name: main` (indented by six spaces, more templates may follow), `spec_more`
// more members of spec (indented by two), placed before the templates.
inline std::string argoWorkflow(const std::string& templates, const std::string& spec_more = "") {
  return "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata:\n  name: wf\nspec:\n"
         "  entrypoint: main\n" +
         spec_more + "  templates:\n    - name: main\n" + templates;
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_ARGO_H_

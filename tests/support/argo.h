// tests/support/argo.h: Argo's ExecuteTemplateArgs, as its agent sends them, for tests.
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

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_ARGO_H_

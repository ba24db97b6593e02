// fuzz/substitution.cc: `${...}` references (core/workflows/substitution.h) in a workflow's
// args. The input is the args as JSON, or, when it is not JSON, one string; the context
// has inputs of each type, the workflow's name and an earlier step's output parameters.
#include <string>

#include "core/workflows/substitution.h"
#include "fuzz/support.h"

namespace {

namespace core = plugboard::core;
using core::Json;

const core::SubstitutionContext& context() {
  static const core::SubstitutionContext made{
      "fuzz-workflow",
      Json::parse(R"({"who":"Ada","n":3,"ratio":0.5,"on":true,"none":null,
                      "list":[1,"two",{"three":3}],"table":{"k":"${inputs.who}"}})"),
      {{"first", Json::parse(R"({"greeting":"Hello, ${inputs.who}!","empty":""})")},
       {"second", Json::object()}}};
  return made;
}

// `out` has the shape of `in`: the same members and items, with strings replaced.
void checkShape(const Json& in, const Json& out) {
  if (in.is_object()) {
    FUZZ_CHECK(out.is_object() && out.size() == in.size());
    for (const auto& [k, v] : in.items()) {
      FUZZ_CHECK(out.contains(k));
      checkShape(v, out.at(k));
    }
  } else if (in.is_array()) {
    FUZZ_CHECK(out.is_array() && out.size() == in.size());
    for (std::size_t i = 0; i < in.size(); ++i) checkShape(in[i], out.at(i));
  } else if (!in.is_string()) {
    FUZZ_CHECK(in == out);
  }
}

// Whether a string in `v` holds "$${", the escape for a literal "${".
bool holdsEscape(const Json& v) {
  if (v.is_string()) return v.get_ref<const std::string&>().find("$${") != std::string::npos;
  for (const auto& item : v) {
    if (item.is_structured() || item.is_string()) {
      if (holdsEscape(item)) return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = plugboard::fuzz::asText(data, size);
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    value =
        Json::parse(Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  const auto refs = core::findReferences(value);
  auto out = core::substitute(value, context());
  if (!refs) {
    FUZZ_CHECK(!out.ok());  // malformed syntax is never substituted
    return 0;
  }
  // Known only while the run goes on: a step's output, an item, the workflow's status.
  bool while_running = false;
  for (const auto& r : *refs) {
    FUZZ_CHECK(r.text.starts_with("${") && r.text.ends_with("}"));
    while_running = while_running || (r.kind != core::Reference::Kind::kInput &&
                                      r.kind != core::Reference::Kind::kWorkflowName);
  }
  if (value.is_string()) FUZZ_CHECK(core::knownOnlyWhileRunning(value) == while_running);
  if (!out) return 0;
  checkShape(value, *out);
  // Args without references or escapes are left as they are.
  if (refs->empty() && !holdsEscape(value)) FUZZ_CHECK(*out == value);
  return 0;
}

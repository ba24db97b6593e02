// fuzz/arcaflow_expression.cc: Arcaflow's expression language
// (core/workflows/arcaflow_expression.h), the `!expr` values of a workflow a stranger may
// bring. The input is the expression; it is parsed, checked, its dependencies listed, and
// evaluated against a root with values of each type.
#include <string>

#include "core/workflows/arcaflow_expression.h"
#include "fuzz/support.h"

namespace {

namespace arcaflow = plugboard::core::arcaflow;
using arcaflow::Json;

const Json& root() {
  static const Json made = Json::parse(R"({
    "input": {"s": "a,b", "n": 3, "f": 1.5, "b": true, "none": null, "list": [1, "two", {"three": 3.0}],
              "map": {"k": "key", "key": "value", "5": "five"}},
    "steps": {"a": {"outputs": {"success": {"y": 2, "text": "Hello"}}}}
  })");
  return made;
}

std::string dumped(const plugboard::core::Expected<Json>& v) {
  return v.ok() ? v->dump(-1, ' ', false, Json::error_handler_t::replace) : "error: " + v.error().message();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = plugboard::fuzz::asText(data, size);
  arcaflow::Position at;
  auto expression = arcaflow::parseExpression(text, &at);
  if (!expression) {
    // One message, saying where; the position is within the text.
    FUZZ_CHECK(expression.error().message().find(" at ") != std::string::npos);
    FUZZ_CHECK(at.line >= 1 && at.column >= 1);
    return 0;
  }
  FUZZ_CHECK(!expression->tree().empty());
  for (const auto& path : expression->dependencies()) {
    FUZZ_CHECK(!path.empty() && path.front() == "$");
    FUZZ_CHECK(arcaflow::pathText(path).front() == '$');
  }
  const auto checked = expression->check();
  arcaflow::Context context;
  context.files_dir = "/nonexistent-plugboard-fuzz";
  context.environment = [](const std::string&) { return std::optional<std::string>(); };
  const auto first = expression->evaluate(root(), context);
  const auto second = expression->evaluate(root(), context);
  // The same answer each time, and an error that says where.
  FUZZ_CHECK(dumped(first) == dumped(second));
  if (!first) FUZZ_CHECK(first.error().message().find(" at ") != std::string::npos);
  // What check() accepts calls only functions that exist with their arity: evaluation
  // may still fail on values, never on "unknown function".
  if (checked.ok() && !first.ok()) {
    FUZZ_CHECK(first.error().message().find("unknown function") == std::string::npos);
  }
  return 0;
}

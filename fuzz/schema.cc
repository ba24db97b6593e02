// fuzz/schema.cc: the schema checker (core/workflows/schema.h) on a value and a schema
// the fuzzer both chooses. The input is the JSON array [value, schema]; a schema comes
// from a plugin's manifest, the value from a workflow's args or an earlier step's outputs.
#include <string>

#include "core/workflows/schema.h"
#include "fuzz/support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using plugboard::core::Json;
  const Json input = Json::parse(plugboard::fuzz::asText(data, size), nullptr, false);
  if (!input.is_array() || input.size() != 2) return 0;
  const Json& value = input[0];
  const Json& schema = input[1];
  for (const auto& problem : plugboard::core::checkSchema(value, schema, "args")) {
    FUZZ_CHECK(problem.starts_with("args"));
  }
  // A value that cannot be checked yet passes whatever the schema says.
  FUZZ_CHECK(plugboard::core::checkSchema(value, schema, "args", [](const Json&) {
               return true;
             }).empty());
  return 0;
}

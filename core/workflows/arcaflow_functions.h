// core/workflows/arcaflow_functions.h: the inside of core/workflows/arcaflow_expression.h
// shared by its two files: the built-in functions (arcaflow_functions.cc) as the evaluator
// (arcaflow_expression.cc) calls them, and the value types both name in messages. Not for
// other folders or layers: they use arcaflow_expression.h.
#ifndef PLUGBOARD_CORE_WORKFLOWS_ARCAFLOW_FUNCTIONS_H_
#define PLUGBOARD_CORE_WORKFLOWS_ARCAFLOW_FUNCTIONS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/workflows/arcaflow_expression.h"

namespace plugboard::core::arcaflow::detail {

struct Function {
  std::size_t arity = 0;
  // Called with arguments of any type: it checks them. Errors start with the function's
  // name; the evaluator adds the position of the call.
  Expected<Json> (*call)(const std::vector<Json>& args, const Context& context) = nullptr;
};
// nullptr for a name that is not a built-in function.
const Function* findFunction(std::string_view name);

// Go's strconv.FormatFloat(v, format, precision, 64): format one of b e E f g G x X, a
// negative precision the fewest digits that read back as `v`.
std::string formatFloat(double v, char format, int precision);

// The most a value an expression makes (a function's result, a joined string) may hold,
// counted by valueBytes(): a value over it is an error where it would be made, so that an
// expression's memory stays within a small multiple of it (docs/arcaflow.md).
inline constexpr std::size_t kMaxValueBytes = std::size_t{16} << 20;
// What `v` holds as the bound counts it: 16 bytes a value (each list item and object
// member included) plus the bytes of its strings and keys; the count stops once past
// `stop`.
std::size_t valueBytes(const Json& v, std::size_t stop = kMaxValueBytes);
// "<what> would make a value of more than 16 MiB ...".
Error tooLarge(const std::string& what);

// Arcaflow's name of a value's type: integer, float, string, bool, list, object, null.
std::string typeName(const Json& v);
// The value as a 64-bit integer, if it is a JSON integer that fits.
std::optional<std::int64_t> asInt(const Json& v);

}  // namespace plugboard::core::arcaflow::detail

#endif  // PLUGBOARD_CORE_WORKFLOWS_ARCAFLOW_FUNCTIONS_H_

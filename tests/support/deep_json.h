// tests/support/deep_json.h: JSON text nested to a chosen depth, for the tests of the
// nesting limit (plugboard/host/json_text.h).
#ifndef PLUGBOARD_TESTS_SUPPORT_DEEP_JSON_H_
#define PLUGBOARD_TESTS_SUPPORT_DEEP_JSON_H_

#include <cstddef>
#include <string>

namespace plugboard::testing {

// `depth` arrays, one inside the other: "[[[]]]" for 3.
inline std::string nestedArrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

// Far deeper than a thread's stack holds when the value is copied or written recursively.
inline constexpr std::size_t kStackBreakingDepth = 200'000;

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_DEEP_JSON_H_

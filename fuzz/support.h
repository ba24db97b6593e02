// fuzz/support.h: what the fuzz targets share: checks that hold whatever the input, and
// splitting one input into the parts a target needs.
//
// A target states each property it relies on with FUZZ_CHECK, which prints the failed
// condition and aborts, so that a broken property is a crash both under libFuzzer and in
// the corpus replay of the normal test suite (built with NDEBUG, where assert() is gone).
// Free functions; thread-safe.
#ifndef PLUGBOARD_FUZZ_SUPPORT_H_
#define PLUGBOARD_FUZZ_SUPPORT_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#define FUZZ_CHECK(condition)                                                                 \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (false)

namespace plugboard::fuzz {

inline std::string_view asText(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The input's first byte, removed from `input` (0 for an empty input): a choice a target
// lets the fuzzer make, such as the size of the pieces a stream arrives in.
inline std::uint8_t takeByte(std::string_view& input) {
  if (input.empty()) return 0;
  const auto byte = static_cast<std::uint8_t>(input.front());
  input.remove_prefix(1);
  return byte;
}

}  // namespace plugboard::fuzz

#endif  // PLUGBOARD_FUZZ_SUPPORT_H_

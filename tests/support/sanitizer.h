// tests/support/sanitizer.h: which sanitizer the suite was built with (tools/test.sh
// --sanitize), for the few tests whose subject a sanitizer's runtime changes. Each use says
// why it adapts. Thread-safe: constants only.
#ifndef PLUGBOARD_TESTS_SUPPORT_SANITIZER_H_
#define PLUGBOARD_TESTS_SUPPORT_SANITIZER_H_

#include <string_view>

namespace plugboard::testing {

#ifdef PLUGBOARD_TEST_SANITIZER
inline constexpr std::string_view kSanitizer = PLUGBOARD_TEST_SANITIZER;
#else
inline constexpr std::string_view kSanitizer = "";
#endif

// ASan and TSan reserve terabytes of address space for their shadow memory at start, so a
// process under them cannot start with an address-space limit (RLIMIT_AS) of any size a
// test would give.
inline constexpr bool kShadowMemory = kSanitizer == "address" || kSanitizer == "thread";

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_SANITIZER_H_

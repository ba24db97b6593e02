// tests/support/text.h: small checks on the text a test reads back.
#ifndef PLUGBOARD_TESTS_SUPPORT_TEXT_H_
#define PLUGBOARD_TESTS_SUPPORT_TEXT_H_

#include <string>

namespace plugboard::testing {

// Whether `part` occurs in `text`.
inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_TEXT_H_

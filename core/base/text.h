// core/base/text.h: small string helpers shared by the core and the CLI.
#ifndef PLUGBOARD_CORE_BASE_TEXT_H_
#define PLUGBOARD_CORE_BASE_TEXT_H_

#include <string>
#include <string_view>
#include <vector>

namespace plugboard::core {

// `items` joined by `separator`; `empty` when there are none.
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ",
                 std::string_view empty = "none");

// ASCII lower case.
std::string toLower(std::string_view s);

// Go's strings.ToLower and strings.ToUpper, which the peers' string functions use: every
// letter to its simple lower (upper) case mapping of Unicode; ASCII text is mapped byte for
// byte, and in other text a byte that starts no valid UTF-8 sequence becomes U+FFFD.
std::string toLowerUnicode(std::string_view s);
std::string toUpperUnicode(std::string_view s);

// Appends `s` to `out` as a JSON string (quoted and escaped; invalid UTF-8 replaced).
void appendJsonString(std::string& out, std::string_view s);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_BASE_TEXT_H_

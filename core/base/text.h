// core/base/text.h: small string helpers shared by the core and the CLI.
#ifndef PLUGBOARD_CORE_BASE_TEXT_H_
#define PLUGBOARD_CORE_BASE_TEXT_H_

#include <optional>
#include <span>
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
// The one rule for "did you mean": the name of `candidates` nearest to `given` (ASCII case
// ignored) by Damerau-Levenshtein distance (insertions, deletions, substitutions and swaps
// of two neighbours each count 1), when that distance is at most a third of the longer
// name's length (at least 1, at most 3) and the candidate is not `given` itself; the first
// listed wins a tie. Nullopt when none is that near.
std::optional<std::string> nearestName(std::string_view given,
                                       std::span<const std::string> candidates);
// "; did you mean 'NAME'?" with the nearest name, or "" when none is near.
std::string didYouMean(std::string_view given, std::span<const std::string> candidates);

// `text` (an expression, a name) as a message quotes it: whole when it has at most `limit`
// bytes, else its first `limit` bytes (cut before a UTF-8 sequence) and "... (N bytes)";
// control characters written as \n, \r, \t, \xNN so that the message stays one line.
std::string excerpt(std::string_view text, std::size_t limit = 80);

// The rule of a name the run's lines show (a workflow's): no control character (C0, DEL,
// C1, U+2028, U+2029), which would start a line of its own or rewrite one, and no path
// separator ('/', '\\'), which the lines use between names. "" when `name` keeps it, else
// the rule broken.
std::string lineNameRule(std::string_view name);

// Appends `s` to `out` as a JSON string (quoted and escaped; invalid UTF-8 replaced).
void appendJsonString(std::string& out, std::string_view s);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_BASE_TEXT_H_

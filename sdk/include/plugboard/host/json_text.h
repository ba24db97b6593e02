// plugboard/host/json_text.h: what JSON text from another party must not be before the
// JSON library reads it.
//
// Too deep: the library parses a document of any depth without recursion, but copying,
// comparing and writing a value recurse once per level, so a document nested some tens of
// thousands of levels deep (a body of 200 KB of '[') exhausts a thread's stack and crashes
// the process. Holding a NUL byte: JSON never does (a string escapes it as \u0000), but the
// library takes a NUL between tokens for the end of the text and reads only what comes
// before it, so "{...}\0anything" would pass for the object while the bytes after it travel
// on. Whatever plugboard parses from a party it does not control (protocol frames, request
// bodies, plugin results, manifests) is checked here first. Free functions; thread-safe.
#ifndef PLUGBOARD_HOST_JSON_TEXT_H_
#define PLUGBOARD_HOST_JSON_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "plugboard/host/expected.h"

namespace plugboard::host {

// Far beyond any document plugboard reads (manifests, args and results nest a few levels),
// far below what a thread's stack holds.
inline constexpr std::size_t kMaxJsonDepth = 512;

// Whether arrays and objects in the JSON text `text` nest deeper than `limit`, counted in
// one pass over the bytes that stops at the first level beyond it. Exact for valid JSON;
// for other text the answer does not matter, since parsing it fails (once holdsNul() has
// refused a NUL byte).
bool jsonDeeperThan(std::string_view text, std::size_t limit = kMaxJsonDepth);

// "nested deeper than 512 levels", for error messages.
std::string tooDeepText(std::size_t limit = kMaxJsonDepth);

// Whether `text` holds a NUL byte, which no JSON text does.
inline bool holdsNul(std::string_view text) { return text.find('\0') != std::string_view::npos; }

// "holds a NUL byte, which JSON never does", for error messages.
inline constexpr const char* kNulText = "holds a NUL byte, which JSON never does";

// Parses `text` as one JSON value after both checks: every reader of JSON from a file or a
// party plugboard does not control goes through here, so all refuse the same things with
// the same words. The error says what is wrong, without naming the text's origin:
// "nested deeper than 512 levels", "holds a NUL byte, ...", or "invalid JSON: <the
// parser's message>"; the caller prefixes the file or the party.
Expected<nlohmann::json> parseJsonText(std::string_view text);

}  // namespace plugboard::host

#endif  // PLUGBOARD_HOST_JSON_TEXT_H_

// plugboard/host/json_depth.h: how deeply nested JSON from another party may be.
//
// The JSON library parses a document of any depth without recursion, but copying,
// comparing and writing a value recurse once per level: a document nested some tens of
// thousands of levels deep (a body of 120 KiB of '[') exhausts a thread's stack and
// crashes the process. Whatever plugboard parses from a party it does not control
// (protocol frames, request bodies, plugin results, manifests) is measured here first and
// refused when it is nested deeper than kMaxJsonDepth. Free functions; thread-safe.
#ifndef PLUGBOARD_HOST_JSON_DEPTH_H_
#define PLUGBOARD_HOST_JSON_DEPTH_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace plugboard::host {

// Far beyond any document plugboard reads (manifests, args and results nest a few levels),
// far below what a thread's stack holds.
inline constexpr std::size_t kMaxJsonDepth = 512;

// Whether arrays and objects in the JSON text `text` nest deeper than `limit`, counted in
// one pass over the bytes that stops at the first level beyond it. Exact for valid JSON;
// for other text the answer does not matter, since parsing it fails.
bool jsonDeeperThan(std::string_view text, std::size_t limit = kMaxJsonDepth);

// "nested deeper than 512 levels", for error messages.
std::string tooDeepText(std::size_t limit = kMaxJsonDepth);

}  // namespace plugboard::host

#endif  // PLUGBOARD_HOST_JSON_DEPTH_H_

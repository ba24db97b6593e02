// core/workflows/tags.h: the model's `{{...}}` tags (core/workflows/model.h), found and filled.
//
//   {{name.path}}    a variable, looked up in a Scope (core/workflows/expression.h); spaces
//                    inside the braces are ignored ("{{ item }}")
//   {{=expression}}  an expression in the kExpr dialect
//
// A string that is exactly one tag takes the value's type (a number stays a number);
// every other tag is spliced in as text: strings as they are, other values as compact JSON.
// Filling a value walks every string of it (object keys too, as Argo substitutes the
// template's JSON text). A tag whose variable the Scope does not know is an error naming
// it, unless the policy says to leave it as written (Argo leaves tags it does not own, e.g.
// of a later stage, for the next pass).
// Free functions; thread-safe.
#ifndef PLUGBOARD_CORE_WORKFLOWS_TAGS_H_
#define PLUGBOARD_CORE_WORKFLOWS_TAGS_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/defaults.h"
#include "core/base/expected.h"
#include "core/workflows/expression.h"

namespace plugboard::core {

struct Tag {
  bool expression = false;  // {{=...}}
  std::string text;         // inside the braces, trimmed; without the '=' of an expression
  std::size_t offset = 0;   // of "{{" in the string
};

// The tags of one string; an error for "{{" without "}}".
Expected<std::vector<Tag>> findTags(std::string_view text);
// Calls `each` for every tag in every string of `value` (keys too); stops at the first
// error and returns it.
Status forEachTag(const Json& value, const std::function<Status(const Tag&)>& each);

struct FillOptions {
  // Tags whose variable is unknown: left as written instead of an error.
  bool keep_unknown = false;
  // The most bytes a filled value may hold (the config's args_limit).
  std::size_t limit = defaults::kArgsLimit;
};

// `text` with its tags filled (one string).
Expected<Json> fillText(std::string_view text, const Scope& scope, const FillOptions& options = {});
// `value` with every tag in it filled.
Expected<Json> fill(const Json& value, const Scope& scope, const FillOptions& options = {});

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_TAGS_H_

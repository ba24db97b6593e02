// core/workflows/arcaflow_expression.h: Arcaflow's expression language (the `!expr` values
// of an Arcaflow workflow), parsed, its dependencies listed, and evaluated over JSON.
//
// The rules are those of Arcaflow's expression library (go.flow.arcalot.io/expressions) and
// the engine's built-in functions (internal/builtinfunctions/functions.go); docs/arcaflow.md
// ("Expressions") describes the dialect and docs/decisions.md cites the source of each rule.
// In short:
//  * paths: `$` is the data root; `.name`, `["key"]`, `[0]`, `[-1]` (from the end),
//    `[<expression>]`; a bare name at the start reads the root (`a.b` is `$.a.b`), inside
//    `[...]` the value being indexed;
//  * literals: integers (64-bit), floats (`1.5`, `5.`, `5.0e-3`), `true`/`false`, strings in
//    "double" or 'single' quotes with the escapes \\ \t \n \r \b \" \' \0 (any other
//    backslash stays as written), raw strings in `backquotes`;
//  * operators, loosest first: `||`, `&&`, `!`, comparisons (`== != < <= > >=`), `+ -`,
//    `* / %`, `^` (power), parentheses, unary `-`. As in the library, `!` and unary `-`
//    apply to everything after them (`-5 + 3` is -8, `!a && b` is !(a && b)). Both sides
//    of an operator must have the same type (an integer and a float do not mix: use
//    intToFloat); `+` also concatenates strings; `&&` and `||` evaluate both sides;
//  * calls of the engine's built-in functions (intToFloat, floatToInt, intToString,
//    floatToString, floatToFormattedString, boolToString, stringToInt, stringToFloat,
//    stringToBool, ceil, floor, round, abs, toLower, toUpper, splitString, readFile,
//    getEnvVar, bindConstants), with their argument types checked when called.
//
// Values: JSON integers are Arcaflow's integers, JSON floats its floats (a front end keeps
// the schema's types: a float field holds a JSON float even when it is whole).
// Errors name the position in the expression ("... at column 7", or "at line 2, column
// 3" for an expression of several lines), and a path that is not there names the path.
// An Expression is immutable and may be evaluated from several threads at once.
#ifndef PLUGBOARD_CORE_WORKFLOWS_ARCAFLOW_EXPRESSION_H_
#define PLUGBOARD_CORE_WORKFLOWS_ARCAFLOW_EXPRESSION_H_

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/expected.h"

namespace plugboard::core::arcaflow {

using Json = nlohmann::json;

// 1-based; columns count characters (UTF-8 sequences), as the library's scanner does.
struct Position {
  std::size_t line = 1;
  std::size_t column = 1;
};

// A path of the data root an expression reads: "$", then each name and literal key as
// written. `$.steps.a.outputs.success.y` is ["$", "steps", "a", "outputs", "success", "y"];
// `$.list[0]["k"]` is ["$", "list", 0, "k"].
using Path = std::vector<Json>;

// `$.steps.a.outputs["odd key"][0]`: names as `.name`, other keys in brackets.
std::string pathText(const Path& path);

// What evaluation may use besides the data.
struct Context {
  // readFile's relative paths are taken from here (an empty path: the working directory),
  // and readFile reads only files beneath it (symbolic links and `..` resolved) unless
  // `read_anywhere` (the CLI's --read-outside-context).
  std::filesystem::path files_dir;
  bool read_anywhere = false;
  // getEnvVar's variables; unset, the process environment.
  std::function<std::optional<std::string>(const std::string&)> environment;
};

namespace detail {
struct Node;
}

class Expression {
 public:
  // The text as given.
  const std::string& text() const { return text_; }

  // Every function called exists and gets its number of arguments: what the engine checks
  // when it loads a workflow. Errors name the call's position.
  Status check() const;

  // The paths of the data root the expression reads, each once, in order of appearance.
  // A path ends where an access is not a name or a literal key: `$.list[$.i].x` reads
  // `$.list` (and `$.i`). Paths that start at a function's result are not listed; those
  // its arguments read are.
  std::vector<Path> dependencies() const;

  // The value of the expression with `root` as `$`.
  Expected<Json> evaluate(const Json& root, const Context& context = {}) const;

  // The syntax tree, each operation parenthesised as the library prints it
  // ("((2) * (3)) + (4)"): for tests and for messages.
  std::string tree() const;

 private:
  friend Expected<Expression> parseExpression(std::string_view, Position*);
  std::string text_;
  std::shared_ptr<const detail::Node> root_;
};

// The expression `text`. On a syntax error, the error says what was found and expected
// where ("expected ']' but found ')' at column 9"), and `error_at`, if given, is set to
// that position, to be added to the position of the text in its file.
Expected<Expression> parseExpression(std::string_view text, Position* error_at = nullptr);

// The names of the built-in functions, sorted.
std::vector<std::string> functionNames();

}  // namespace plugboard::core::arcaflow

#endif  // PLUGBOARD_CORE_WORKFLOWS_ARCAFLOW_EXPRESSION_H_

// core/workflows/expression.h: the expressions of workflow files, evaluated over a Scope.
//
// Two dialects, as the peers define them (docs/decisions.md cites the sources):
//  * kCondition: Argo's `when` and `depends` after {{...}} substitution, in govaluate's
//    rules (util/template, workflow/controller/operator.go's shouldExecute): numbers,
//    'single' and "double" quoted strings, bare words compared as strings, ==, !=, <, <=,
//    >, >=, =~, !~, &&, ||, !, parentheses, `in (a, b)`.
//  * kExpr: the expression language of Argo's `{{=...}}` tags and retryStrategy.expression
//    (expr-lang, with the functions Argo's examples use: sprig.*, asInt, asFloat, string,
//    toJson, jsonpath, int, float, len, ...): member access `a.b`, `a['b-c']`, `a[0]`,
//    ternary `c ? x : y`, `??`, arithmetic, comparisons, `in`, `and`/`or`/`not`, calls.
//
// Variables come from the Scope by dotted name ("inputs.parameters.x",
// "tasks.A.outputs.result", "item"); the evaluator asks for the longest chain of member
// names first, then shorter ones, and indexes into the value it gets for the rest.
// Errors say what is wrong and where in the expression ("unknown variable 'x' at 5").
// Free functions; thread-safe.
#ifndef PLUGBOARD_CORE_WORKFLOWS_EXPRESSION_H_
#define PLUGBOARD_CORE_WORKFLOWS_EXPRESSION_H_

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/base/expected.h"

namespace plugboard::core {

using Json = nlohmann::json;

class Scope {
 public:
  virtual ~Scope() = default;
  // The value named `dotted` ("inputs.parameters.x"), or nullopt when it has none.
  virtual std::optional<Json> lookup(std::string_view dotted) const = 0;
};

// A Scope over a JSON object whose members are the first names ("inputs", "item", ...).
class JsonScope final : public Scope {
 public:
  explicit JsonScope(const Json& root) : root_(root) {}
  std::optional<Json> lookup(std::string_view dotted) const override;

 private:
  const Json& root_;
};

enum class Dialect { kCondition, kExpr };

// The value of `expression`.
Expected<Json> evaluate(std::string_view expression, Dialect dialect, const Scope& scope);

// Its truth as the peers take it: kCondition must yield a boolean; kExpr: a boolean, or
// the strings "true"/"false".
Expected<bool> evaluateCondition(std::string_view expression, Dialect dialect,
                                 const Scope& scope);

// The syntax alone (no variable is looked up): for validate.
Status checkExpression(std::string_view expression, Dialect dialect);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_EXPRESSION_H_

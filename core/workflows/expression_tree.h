// core/workflows/expression_tree.h: the inside of core/workflows/expression.h, shared by its
// files: the syntax tree both dialects parse into, the evaluator, and the function table.
// Not for other folders or layers: they use expression.h.
#ifndef PLUGBOARD_CORE_WORKFLOWS_EXPRESSION_TREE_H_
#define PLUGBOARD_CORE_WORKFLOWS_EXPRESSION_TREE_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/workflows/expression.h"

namespace plugboard::core::expression {

struct Node {
  enum class Kind {
    kLiteral,  // value
    kName,     // text: the first name of a variable
    kMember,   // kids[0].text; optional for ?.
    kIndex,    // kids[0][kids[1]]; optional for ?.[
    kSlice,    // kids[0][kids[1]:kids[2]] (a missing bound is a null literal)
    kUnary,    // text kids[0]
    kBinary,   // kids[0] text kids[1]
    kTernary,  // kids[0] ? kids[1] : kids[2]
    kCall,     // text(kids...): text is the dotted function name ("sprig.upper")
    kArray,    // [kids...]
    kMap,      // {kids[0]: kids[1], ...}: keys are literals
    kClosure,  // { kids[0] }, the predicate of filter/map/...
    kPointer,  // #, the element a closure is called with
  };
  Kind kind = Kind::kLiteral;
  std::size_t pos = 0;  // 1-based, of the node's first character in the expression
  std::string text;
  Json value;
  bool optional = false;
  // Of the recursion evaluating it (a binary operator's left spine is walked in a loop);
  // the parser bounds it, so evaluation cannot overflow.
  int depth = 1;
  std::vector<std::unique_ptr<Node>> kids;

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  // Takes the tree apart in a loop: a chain of any length is freed without recursion.
  ~Node();
};
using NodePtr = std::unique_ptr<Node>;

struct Token {
  enum class Type { kEnd, kNumber, kString, kName, kOp };
  Type type = Type::kEnd;
  std::string text;  // name or operator
  Json value;        // number or string
  std::size_t pos = 0;  // 1-based
};
// The tokens of `text`, ending with one of Type::kEnd.
Expected<std::vector<Token>> tokenize(std::string_view text, Dialect dialect);

Expected<NodePtr> parse(std::string_view text, Dialect dialect);

// An error "<what> at <pos>"; unknown variables carry Error::Code::kNotFound.
Error errorAt(std::string what, std::size_t pos, Error::Code code = Error::Code::kInvalid);

class Evaluator {
 public:
  Evaluator(const Scope& scope, Dialect dialect) : scope_(scope), dialect_(dialect) {}
  Expected<Json> eval(const Node& node);
  // A closure's value for one element (`#`).
  Expected<Json> call(const Node& closure, const Json& element);
  Dialect dialect() const { return dialect_; }

 private:
  Expected<Json> variable(const Node& node, bool guarded);
  Expected<Json> binary(const Node& node);
  // `node`'s operator applied to its left operand's value `a` and its right operand.
  Expected<Json> applyBinary(const Node& node, Json a);
  Expected<Json> unary(const Node& node);
  Expected<Json> index(const Node& node, bool guarded);

  const Scope& scope_;
  Dialect dialect_;
  std::vector<const Json*> elements_;  // of the closures being called, innermost last
};

// Functions by their name as called ("asInt", "sprig.upper").
struct Function {
  // Called with the evaluated arguments.
  Expected<Json> (*plain)(const std::vector<Json>& args, std::size_t pos) = nullptr;
  // Called with the call node itself (for closures: filter, map, all, ...).
  Expected<Json> (*lazy)(Evaluator& evaluator, const Node& call) = nullptr;
  int closure_arg = -1;  // the argument that is a closure, for the parser
};
const Function* findFunction(std::string_view name);

// Values as the dialects see them.
bool isNumber(const Json& v);
double toDouble(const Json& v);
std::string typeName(const Json& v);
// A string as it is; numbers as Go writes them (35.8, 5 for 5.0); other values compact JSON.
std::string toText(const Json& v);
// Compact JSON, numbers as Go writes them.
std::string toJsonText(const Json& v);
// `a == b` with numbers compared by value (1 == 1.0).
bool equal(const Json& a, const Json& b);
// The JSONPath `path` applied to `document` (jsonpath(...)).
Expected<Json> jsonPath(const Json& document, std::string_view path, std::size_t pos);

}  // namespace plugboard::core::expression

#endif  // PLUGBOARD_CORE_WORKFLOWS_EXPRESSION_TREE_H_

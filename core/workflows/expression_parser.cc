// The one precedence-climbing parser of both dialects (core/workflows/expression_tree.h);
// their tokens come from expression_lexer.cc. docs/decisions.md, "Argo expressions", names the
// rules each dialect follows and where they come from.
#include <optional>

#include "core/base/text.h"
#include "core/workflows/expression_tree.h"

namespace plugboard::core::expression {
namespace {

constexpr int kMaxDepth = 200;

NodePtr makeNode(Node::Kind kind, std::size_t pos, std::string text = {}) {
  auto n = std::make_unique<Node>();
  n->kind = kind;
  n->pos = pos;
  n->text = std::move(text);
  return n;
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, Dialect d) : t_(std::move(tokens)), dialect_(d) {}

  Expected<NodePtr> run() {
    NodePtr n = expression();
    if (n && peek().type != Token::Type::kEnd) fail("unexpected " + describe(peek()), peek().pos);
    if (error_) return *error_;
    return n;
  }

 private:
  const Token& peek(std::size_t ahead = 0) const {
    return t_[std::min(k_ + ahead, t_.size() - 1)];
  }
  bool isOp(std::string_view op, std::size_t ahead = 0) const {
    return peek(ahead).type == Token::Type::kOp && peek(ahead).text == op;
  }
  bool isWord(std::string_view w, std::size_t ahead = 0) const {
    return dialect_ == Dialect::kExpr && peek(ahead).type == Token::Type::kName &&
           peek(ahead).text == w;
  }
  static std::string describe(const Token& t) {
    switch (t.type) {
      case Token::Type::kEnd: return "end of expression";
      case Token::Type::kNumber: return "number " + toText(t.value);
      case Token::Type::kString:
        return "string " + excerpt(t.value.dump(), 40);
      default:
        return "'" + excerpt(t.text, 40) + "'";
    }
  }
  NodePtr fail(std::string what, std::size_t pos) {
    if (!error_) error_ = errorAt(std::move(what), pos);
    return nullptr;
  }
  bool expect(std::string_view op) {
    if (isOp(op)) {
      ++k_;
      return true;
    }
    fail("expected '" + std::string(op) + "', found " + describe(peek()), peek().pos);
    return false;
  }

  // Counts the parser's own recursion (parentheses, prefixes) while it lasts.
  struct Nesting {
    explicit Nesting(int& d) : depth(++d) {}
    ~Nesting() { --depth; }
    int& depth;
  };

  // `n` with its depth from its kids'; an error past kMaxDepth. The left operand of a
  // binary operator that is itself one (`a + b + c` leans left) adds no depth: evaluation
  // walks that spine in a loop (Evaluator::binary), so a flat chain is not deep.
  NodePtr deepest(NodePtr n) {
    for (const auto& kid : n->kids) {
      const bool spine = n->kind == Node::Kind::kBinary && kid == n->kids.front() &&
                         kid->kind == Node::Kind::kBinary;
      n->depth = std::max(n->depth, kid->depth + (spine ? 0 : 1));
    }
    if (n->depth > kMaxDepth) return fail("expression nested too deeply", n->pos);
    return n;
  }

  NodePtr expression() {
    Nesting nesting(depth_);
    if (depth_ > kMaxDepth) return fail("expression nested too deeply", peek().pos);
    NodePtr cond = binary(0);
    // expr's pipe: `a | f(b)` is f(a, b).
    while (cond && dialect_ == Dialect::kExpr && isOp("|")) {
      ++k_;
      if (peek().type != Token::Type::kName || !isOp("(", 1)) {
        return fail("expected a function call after '|', found " + describe(peek()), peek().pos);
      }
      auto callee = makeNode(Node::Kind::kName, peek().pos, peek().text);
      ++k_;
      cond = call(std::move(callee), std::move(cond));
    }
    if (cond && isOp("?")) {
      auto n = makeNode(Node::Kind::kTernary, cond->pos);
      ++k_;
      NodePtr yes = expression();
      if (!yes || !expect(":")) return nullptr;
      NodePtr no = expression();
      if (!no) return nullptr;
      n->kids.push_back(std::move(cond));
      n->kids.push_back(std::move(yes));
      n->kids.push_back(std::move(no));
      cond = deepest(std::move(n));
    }
    return cond;
  }

  // The binary operator at the cursor: its canonical text, precedence, tokens; 0 if none.
  int binaryOp(std::string& op, std::size_t& width, bool& right) const {
    const Token& t = peek();
    width = 1;
    right = false;
    if (t.type == Token::Type::kOp) {
      op = t.text;
    } else if (t.type == Token::Type::kName && (dialect_ == Dialect::kExpr || t.text == "in")) {
      op = t.text;
      if (op == "and") op = "&&";
      if (op == "or") op = "||";
      if (op == "not" && peek(1).type == Token::Type::kName) {
        const std::string& next = peek(1).text;
        if (next == "in" || next == "matches" || next == "contains" || next == "startsWith" ||
            next == "endsWith") {
          op = "not " + next;
          width = 2;
        }
      }
    } else {
      return 0;
    }
    if (op == "||") return 10;
    if (op == "&&") return 15;
    if (op == "==" || op == "!=" || op == "<" || op == ">" || op == "<=" || op == ">=" ||
        op == "in") {
      return 20;
    }
    if (dialect_ == Dialect::kCondition && (op == "=~" || op == "!~")) return 20;
    if (dialect_ == Dialect::kExpr &&
        (op == "matches" || op == "contains" || op == "startsWith" || op == "endsWith" ||
         op == "not in" || op == "not matches" || op == "not contains" ||
         op == "not startsWith" || op == "not endsWith")) {
      return 20;
    }
    if (op == "+" || op == "-") return 30;
    if (op == "*" || op == "/" || op == "%") return 60;
    if (op == "**" || (op == "^" && dialect_ == Dialect::kExpr)) {
      right = true;
      op = "**";
      return 100;
    }
    if (op == "??") return dialect_ == Dialect::kExpr ? 500 : 5;
    return 0;
  }

  NodePtr binary(int min) {
    NodePtr left = unary();
    while (left) {
      std::string op;
      std::size_t width = 0;
      bool right = false;
      int prec = binaryOp(op, width, right);
      if (prec == 0 || prec < min || (prec == min && !right)) break;
      const std::size_t pos = peek().pos;
      k_ += width;
      NodePtr rhs = binary(right ? prec : prec + 1);
      if (!rhs) return nullptr;
      auto n = makeNode(Node::Kind::kBinary, pos, op);
      n->kids.push_back(std::move(left));
      n->kids.push_back(std::move(rhs));
      left = deepest(std::move(n));
    }
    return left;
  }

  NodePtr unary() {
    const Token& t = peek();
    std::string op;
    int prec = 0;
    if (isOp("!") || isWord("not")) {
      op = "!";
      prec = 50;
    } else if (isOp("-") || isOp("+")) {
      op = t.text;
      prec = 90;
    }
    if (op.empty()) return postfix(primary());
    Nesting nesting(depth_);
    if (depth_ > kMaxDepth) return fail("expression nested too deeply", t.pos);
    auto n = makeNode(Node::Kind::kUnary, t.pos, op);
    ++k_;
    // govaluate's prefixes bind tighter than every binary operator.
    NodePtr operand = dialect_ == Dialect::kCondition ? unary() : binary(prec);
    if (!operand) return nullptr;
    n->kids.push_back(std::move(operand));
    return deepest(std::move(n));
  }

  NodePtr primary() {
    const Token& t = peek();
    switch (t.type) {
      case Token::Type::kEnd:
        return fail("expression ends early", t.pos);
      case Token::Type::kNumber:
      case Token::Type::kString: {
        auto n = makeNode(Node::Kind::kLiteral, t.pos);
        n->value = t.value;
        ++k_;
        return n;
      }
      case Token::Type::kName:
        return name();
      case Token::Type::kOp:
        break;
    }
    if (isOp("(")) {
      ++k_;
      NodePtr inner = expression();
      if (!inner) return nullptr;
      if (dialect_ == Dialect::kCondition && isOp(",")) {  // govaluate's (a, b) for `in`
        auto list = makeNode(Node::Kind::kArray, t.pos);
        list->kids.push_back(std::move(inner));
        while (isOp(",")) {
          ++k_;
          NodePtr item = expression();
          if (!item) return nullptr;
          list->kids.push_back(std::move(item));
        }
        inner = std::move(list);
      }
      return expect(")") ? std::move(inner) : nullptr;
    }
    if (dialect_ == Dialect::kExpr) {
      if (isOp("[")) return list();
      if (isOp("{")) return map();
      if (isOp("#")) {
        if (closures_ == 0) return fail("'#' outside a closure", t.pos);
        ++k_;
        return makeNode(Node::Kind::kPointer, t.pos);
      }
      if (isOp(".") && closures_ > 0 && peek(1).type == Token::Type::kName) {
        // `.field` in a closure is `#.field`.
        auto n = makeNode(Node::Kind::kMember, t.pos, peek(1).text);
        n->kids.push_back(makeNode(Node::Kind::kPointer, t.pos));
        k_ += 2;
        return n;
      }
    }
    return fail("unexpected " + describe(t), t.pos);
  }

  NodePtr name() {
    const Token& t = peek();
    ++k_;
    if (t.text == "true" || t.text == "false") {
      auto n = makeNode(Node::Kind::kLiteral, t.pos);
      n->value = t.text == "true";
      return n;
    }
    if (dialect_ == Dialect::kCondition) {
      if (t.text == "in") return fail("unexpected 'in'", t.pos);
      // Argo's `when` turns govaluate's variables into strings (steps.go, shouldExecute).
      auto n = makeNode(Node::Kind::kLiteral, t.pos);
      n->value = t.text;
      return n;
    }
    if (t.text == "nil") return makeNode(Node::Kind::kLiteral, t.pos);
    static constexpr std::string_view kReserved[] = {"and", "or", "not", "in", "matches",
                                                     "contains", "startsWith", "endsWith"};
    for (auto w : kReserved) {
      if (t.text == w) return fail("unexpected '" + t.text + "'", t.pos);
    }
    return makeNode(Node::Kind::kName, t.pos, t.text);
  }

  NodePtr list() {
    auto n = makeNode(Node::Kind::kArray, peek().pos);
    ++k_;
    while (!isOp("]")) {
      NodePtr item = expression();
      if (!item) return nullptr;
      n->kids.push_back(std::move(item));
      if (!isOp(",")) break;
      ++k_;
    }
    return expect("]") ? deepest(std::move(n)) : nullptr;
  }

  NodePtr map() {
    auto n = makeNode(Node::Kind::kMap, peek().pos);
    ++k_;
    while (!isOp("}")) {
      const Token& key = peek();
      auto k = makeNode(Node::Kind::kLiteral, key.pos);
      if (key.type == Token::Type::kName) {
        k->value = key.text;
      } else if (key.type == Token::Type::kString) {
        k->value = key.value;
      } else if (key.type == Token::Type::kNumber) {
        k->value = toText(key.value);
      } else {
        return fail("a map key must be a name or a string, not " + describe(key), key.pos);
      }
      ++k_;
      if (!expect(":")) return nullptr;
      NodePtr value = expression();
      if (!value) return nullptr;
      n->kids.push_back(std::move(k));
      n->kids.push_back(std::move(value));
      if (!isOp(",")) break;
      ++k_;
    }
    return expect("}") ? deepest(std::move(n)) : nullptr;
  }

  // The dotted name of a chain of names (sprig.upper), for a call.
  static bool dottedName(const Node& n, std::string& out) {
    if (n.kind == Node::Kind::kName) {
      out = n.text;
      return true;
    }
    if (n.kind != Node::Kind::kMember || n.optional || !dottedName(*n.kids[0], out)) return false;
    out += "." + n.text;
    return true;
  }

  NodePtr postfix(NodePtr n) {
    if (dialect_ != Dialect::kExpr) return n;
    while (n) {
      const Token& t = peek();
      if (isOp(".") || isOp("?.")) {
        const bool optional = t.text == "?.";
        ++k_;
        if (optional && isOp("[")) {
          n = index(std::move(n), true);
          continue;
        }
        if (peek().type != Token::Type::kName) {
          return fail("expected a name after '" + t.text + "', found " + describe(peek()),
                      peek().pos);
        }
        auto m = makeNode(Node::Kind::kMember, peek().pos, peek().text);
        m->optional = optional;
        m->kids.push_back(std::move(n));
        n = deepest(std::move(m));
        ++k_;
      } else if (isOp("[")) {
        n = index(std::move(n), false);
      } else if (isOp("(")) {
        n = call(std::move(n));
      } else {
        break;
      }
    }
    return n;
  }

  NodePtr index(NodePtr of, bool optional) {
    const std::size_t pos = peek().pos;
    ++k_;  // [
    NodePtr from;
    if (!isOp(":")) {
      from = expression();
      if (!from) return nullptr;
    }
    if (isOp(":")) {
      ++k_;
      auto n = makeNode(Node::Kind::kSlice, pos);
      n->optional = optional;
      n->kids.push_back(std::move(of));
      n->kids.push_back(from ? std::move(from) : makeNode(Node::Kind::kLiteral, pos));
      if (isOp("]")) {
        n->kids.push_back(makeNode(Node::Kind::kLiteral, pos));
      } else {
        NodePtr to = expression();
        if (!to) return nullptr;
        n->kids.push_back(std::move(to));
      }
      return expect("]") ? deepest(std::move(n)) : nullptr;
    }
    if (!from) return fail("expected an index", peek().pos);
    auto n = makeNode(Node::Kind::kIndex, pos);
    n->optional = optional;
    n->kids.push_back(std::move(of));
    n->kids.push_back(std::move(from));
    return expect("]") ? deepest(std::move(n)) : nullptr;
  }

  // A call of `callee`; `piped` (a | f()) is its first argument.
  NodePtr call(NodePtr callee, NodePtr piped = nullptr) {
    std::string fname;
    if (!dottedName(*callee, fname)) return fail("only functions can be called", peek().pos);
    const Node* root = callee.get();
    while (!root->kids.empty()) root = root->kids[0].get();
    const Function* f = findFunction(fname);
    if (!f) return fail("unknown function '" + fname + "'", root->pos);
    auto n = makeNode(Node::Kind::kCall, root->pos, fname);
    ++k_;  // (
    if (piped) n->kids.push_back(std::move(piped));
    while (!isOp(")")) {
      NodePtr arg;
      if (static_cast<int>(n->kids.size()) == f->closure_arg) {
        auto closure = makeNode(Node::Kind::kClosure, peek().pos);
        ++closures_;
        const bool braced = isOp("{");
        if (braced) ++k_;
        NodePtr body = expression();
        --closures_;
        if (!body || (braced && !expect("}"))) return nullptr;
        closure->kids.push_back(std::move(body));
        arg = deepest(std::move(closure));
      } else {
        arg = expression();
        if (!arg) return nullptr;
      }
      n->kids.push_back(std::move(arg));
      if (!isOp(",")) break;
      ++k_;
    }
    return expect(")") ? deepest(std::move(n)) : nullptr;
  }

  std::vector<Token> t_;
  Dialect dialect_;
  std::size_t k_ = 0;
  int closures_ = 0;
  int depth_ = 0;
  std::optional<Error> error_;
};

}  // namespace

Node::~Node() {
  std::vector<NodePtr> rest = std::move(kids);
  while (!rest.empty()) {
    NodePtr n = std::move(rest.back());
    rest.pop_back();
    for (auto& kid : n->kids) rest.push_back(std::move(kid));
    n->kids.clear();
  }
}

Error errorAt(std::string what, std::size_t pos, Error::Code code) {
  return Error(std::move(what) + " at " + std::to_string(pos), code);
}

Expected<NodePtr> parse(std::string_view text, Dialect dialect) {
  auto tokens = tokenize(text, dialect);
  if (!tokens) return tokens.error();
  return Parser(std::move(*tokens), dialect).run();
}

}  // namespace plugboard::core::expression

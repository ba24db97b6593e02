// Arcaflow's expression language (core/workflows/arcaflow_expression.h): the scanner, the
// parser, the dependency walk and the evaluator. The functions are arcaflow_functions.cc.
//
// The scanner splits text as Go's text/scanner does (the library's tokenizer.go uses it in
// its default mode) and then classifies each piece with the library's patterns, so the
// same text gives the same tokens: `07` and `1e5` are names, `.5` and `1e+5` are not
// tokens at all, `&&` is two `&`, and comments (`//`, `/* */`) are skipped. The parser
// follows the library's grammar (recursive_descent_parser.go) function for function.
#include "core/workflows/arcaflow_expression.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <utility>

#include "core/base/text.h"
#include "core/workflows/arcaflow_functions.h"

namespace plugboard::core::arcaflow {
namespace detail {

enum class Op { kAdd, kSub, kMul, kDiv, kMod, kPow, kEq, kNe, kGt, kLt, kGe, kLe, kAnd, kOr, kNot };

struct Node {
  enum class Kind { kLiteral, kIdentifier, kDot, kBracket, kCall, kBinary, kUnary };
  Kind kind = Kind::kLiteral;
  std::size_t offset = 0;  // of the token that names the node (an operator, a name, '[')
  std::string name;        // identifier, the name after '.', function name
  Op op = Op::kAdd;
  Json value;  // literal
  // dot: [left]; bracket: [left, key]; call: arguments; binary: [left, right]; unary: [x]
  std::vector<std::shared_ptr<const Node>> kids;
  // Of the recursion walking it: a binary operator's left operand that is one too (`a + b +
  // c` leans left) adds none, as every walk takes that spine in a loop (leftSpine).
  int depth = 1;

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  // Takes apart what it alone holds in a loop: a chain of any length is freed without
  // recursion.
  ~Node() {
    std::vector<std::shared_ptr<const Node>> rest = std::move(kids);
    while (!rest.empty()) {
      std::shared_ptr<const Node> n = std::move(rest.back());
      rest.pop_back();
      if (n.use_count() != 1) continue;
      auto& more = const_cast<Node&>(*n).kids;  // made non-const (make_shared<Node>)
      for (auto& kid : more) rest.push_back(std::move(kid));
      more.clear();
    }
  }
};

// `n` and its left operands while they are binary operators, outermost first: the order a
// loop walks them back (innermost first) is the order of the text.
std::vector<const Node*> leftSpine(const Node& n) {
  std::vector<const Node*> spine{&n};
  while (spine.back()->kids[0]->kind == Node::Kind::kBinary) {
    spine.push_back(spine.back()->kids[0].get());
  }
  return spine;
}

}  // namespace detail

namespace {

using detail::Node;
using detail::Op;
using NodePtr = std::shared_ptr<Node>;

constexpr int kMaxDepth = 200;

// ---------------------------------------------------------------------------------------
// Positions

Position positionOf(std::string_view text, std::size_t offset) {
  Position p;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++p.line;
      p.column = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++p.column;
    }
  }
  return p;
}

std::string where(std::string_view text, std::size_t offset) {
  const Position p = positionOf(text, offset);
  if (text.find('\n') == std::string_view::npos) return "at column " + std::to_string(p.column);
  return "at line " + std::to_string(p.line) + ", column " + std::to_string(p.column);
}

// ---------------------------------------------------------------------------------------
// Tokens

enum class Tok { kName, kString, kRawString, kInt, kFloat, kBool, kOp, kInvalid, kEnd };

struct Token {
  Tok type = Tok::kEnd;
  std::string text;
  std::size_t offset = 0;
  std::string why;  // kInvalid: what is wrong
};

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isWord(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isHex(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// The library's patterns, by hand: float `^\d+\.\d*(?:[eE][+-]?\d+)?$`, int
// `^(?:0|[1-9]\d*)$`, identifier `^\w+$`.
bool matchesFloat(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && isDigit(s[i])) ++i;
  if (i == 0 || i == s.size() || s[i] != '.') return false;
  ++i;
  while (i < s.size() && isDigit(s[i])) ++i;
  if (i == s.size()) return true;
  if (lower(s[i]) != 'e') return false;
  ++i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const std::size_t digits = i;
  while (i < s.size() && isDigit(s[i])) ++i;
  return i > digits && i == s.size();
}
bool matchesInt(std::string_view s) {
  if (s == "0") return true;
  if (s.empty() || s[0] < '1' || s[0] > '9') return false;
  return std::all_of(s.begin(), s.end(), isDigit);
}
bool matchesWord(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), isWord); }

class Scanner {
 public:
  explicit Scanner(std::string_view text) : s_(text), end_(text.size()) {
    // The library trims the text first; only the end matters here (positions count from
    // the text as given).
    while (end_ > 0 && isSpace(s_[end_ - 1])) --end_;
  }

  std::vector<Token> all() {
    std::vector<Token> out;
    for (;;) {
      out.push_back(next());
      if (out.back().type == Tok::kEnd || out.back().type == Tok::kInvalid) return out;
    }
  }

 private:
  static bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  char at(std::size_t i) const { return i < end_ ? s_[i] : '\0'; }

  Token make(Tok type, std::size_t from, std::size_t to) {
    Token t;
    t.type = type;
    t.text = std::string(s_.substr(from, to - from));
    t.offset = from;
    i_ = to;
    return t;
  }
  Token invalid(std::size_t from, std::size_t to, std::string why) {
    Token t = make(Tok::kInvalid, from, to);
    t.why = std::move(why);
    return t;
  }

  Token next() {
    bool skipped_comment = false;
    for (;;) {
      while (i_ < end_ && isSpace(s_[i_])) ++i_;
      if (at(i_) == '/' && at(i_ + 1) == '/') {
        while (i_ < end_ && s_[i_] != '\n') ++i_;
        skipped_comment = true;
      } else if (at(i_) == '/' && at(i_ + 1) == '*') {
        const auto close = s_.substr(0, end_).find("*/", i_ + 2);
        if (close == std::string_view::npos) return invalid(i_, end_, "unterminated comment");
        i_ = close + 2;
        skipped_comment = true;
      } else {
        break;
      }
    }
    if (i_ >= end_) {
      // The library's scanner gives an empty token there, which matches no pattern.
      if (skipped_comment) return invalid(end_, end_, "a comment cannot end an expression");
      Token t;
      t.offset = end_;
      return t;
    }
    const std::size_t from = i_;
    const char c = s_[i_];
    if (c == '"' || c == '\'') return quoted(from, c);
    if (c == '`') {
      const auto close = s_.substr(0, end_).find('`', from + 1);
      if (close == std::string_view::npos) return invalid(from, end_, "unterminated raw string");
      if (s_.substr(from, close - from).find('\n') != std::string_view::npos) {
        return invalid(from, close + 1, "a raw string cannot span lines");
      }
      return make(Tok::kRawString, from, close + 1);
    }
    if (isDigit(c) || (c == '.' && isDigit(at(from + 1)))) return number(from);
    if (isWord(c) || static_cast<unsigned char>(c) >= 0x80) {
      std::size_t j = from;
      while (j < end_ && (isWord(s_[j]) || static_cast<unsigned char>(s_[j]) >= 0x80)) ++j;
      const std::string_view word = s_.substr(from, j - from);
      if (!matchesWord(word)) return invalid(from, j, "names are letters, digits and '_'");
      return make(word == "true" || word == "false" ? Tok::kBool : Tok::kName, from, j);
    }
    if (std::string_view("[]().$@=:?-*,/><+!^%&|").find(c) != std::string_view::npos) {
      return make(Tok::kOp, from, from + 1);
    }
    return invalid(from, from + 1, "not part of the language");
  }

  // A "..." or '...' string as text/scanner delimits it: a backslash takes the character
  // after it (and the digits of \x, \u, \U and octal escapes); a newline or the end
  // before the closing quote leaves it unterminated.
  Token quoted(std::size_t from, char quote) {
    std::size_t j = from + 1;
    for (;;) {
      if (j >= end_ || s_[j] == '\n') return invalid(from, j, "unterminated string");
      const char c = s_[j];
      if (c == quote) return make(Tok::kString, from, j + 1);
      if (c != '\\') {
        ++j;
        continue;
      }
      const char e = at(j + 1);
      if (std::string_view("abfnrtv\\").find(e) != std::string_view::npos || e == quote) {
        j += 2;
      } else if (e >= '0' && e <= '7') {
        j += 1;
        for (int n = 0; n < 3 && at(j) >= '0' && at(j) <= '7'; ++n) ++j;
      } else if (e == 'x' || e == 'u' || e == 'U') {
        j += 2;
        const int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        for (int k = 0; k < n && isHex(at(j)); ++k) ++j;
      } else {
        j += 1;  // an unknown escape: the character after it is read as any other
      }
    }
  }

  // A number as text/scanner's scanNumber delimits it, then classified by the patterns.
  Token number(std::size_t from) {
    std::size_t j = from;
    int base = 10;
    auto digits = [&](int b) {
      while (j < end_ && (s_[j] == '_' || (b == 16 ? isHex(s_[j]) : isDigit(s_[j])))) ++j;
    };
    if (s_[j] != '.') {
      if (s_[j] == '0') {
        ++j;
        const char p = lower(at(j));
        if (p == 'x') {
          ++j;
          base = 16;
        } else if (p == 'o' || p == 'b') {
          ++j;
        }
      }
      digits(base);
    }
    if (at(j) == '.') {
      ++j;
      digits(base);
    }
    const char e = lower(at(j));
    if (e == 'e' || e == 'p') {
      ++j;
      if (at(j) == '+' || at(j) == '-') ++j;
      digits(10);
    }
    const std::string_view text = s_.substr(from, j - from);
    if (matchesFloat(text)) return make(Tok::kFloat, from, j);
    if (matchesInt(text)) return make(Tok::kInt, from, j);
    if (matchesWord(text)) return make(Tok::kName, from, j);  // 07, 1e5, 0x1F: names
    std::string why = "not a number of the language";
    if (text.front() == '.') why += " (a list index is written [0])";
    return invalid(from, j, why);
  }

  std::string_view s_;
  std::size_t end_;
  std::size_t i_ = 0;
};

// ---------------------------------------------------------------------------------------
// Parser

// The library's escape replacer: the pairs below, left to right; any other backslash
// stays as written.
std::string unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      char r = 0;
      bool known = true;
      switch (s[i + 1]) {
        case '\\': r = '\\'; break;
        case 't': r = '\t'; break;
        case 'n': r = '\n'; break;
        case 'r': r = '\r'; break;
        case 'b': r = '\b'; break;
        case '"': r = '"'; break;
        case '\'': r = '\''; break;
        case '0': r = '\0'; break;
        default: known = false;
      }
      if (known) {
        out += r;
        ++i;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::string describe(const Token& t) {
  if (t.type == Tok::kEnd) return "the end of the expression";
  return "'" + excerpt(t.text, 40) + "'";
}

class Parser {
 public:
  Parser(std::string_view text, Position* error_at)
      : text_(text), tokens_(Scanner(text).all()), error_at_(error_at) {}

  Expected<NodePtr> parse() {
    if (peek().type == Tok::kEnd) return fail("empty expression", peek());
    if (peek().type == Tok::kInvalid) return invalidToken(peek());
    auto root = parseRoot();
    if (!root) return root;
    if (peek().type != Tok::kEnd) return expected("an operator or the end of the expression");
    return root;
  }

 private:
  const Token& peek() const { return tokens_[i_]; }
  bool isOp(char c) const { return peek().type == Tok::kOp && peek().text[0] == c; }
  // Past the current token; an invalid token becomes the error.
  Status advance() {
    if (tokens_[i_].type != Tok::kEnd) ++i_;
    if (tokens_[i_].type == Tok::kInvalid) return invalidToken(tokens_[i_]);
    return Status::Ok();
  }
  Error invalidToken(const Token& t) {
    return fail("invalid token " + (t.text.empty() ? std::string("at the end") : describe(t)) +
                    " (" + t.why + ")",
                t);
  }

  Error fail(std::string what, const Token& t) {
    if (error_at_) *error_at_ = positionOf(text_, t.offset);
    return Error(what + " " + where(text_, t.offset));
  }
  Error expected(const std::string& what) {
    return fail("expected " + what + " but found " + describe(peek()), peek());
  }

  Expected<NodePtr> finish(NodePtr n) {
    for (const auto& kid : n->kids) {
      const bool spine = n->kind == Node::Kind::kBinary && kid == n->kids.front() &&
                         kid->kind == Node::Kind::kBinary;
      n->depth = std::max(n->depth, kid->depth + (spine ? 0 : 1));
    }
    if (n->depth > kMaxDepth) return fail("expression nested too deeply", tokens_[i_]);
    return n;
  }

  NodePtr node(Node::Kind kind, std::size_t offset) {
    auto n = std::make_shared<Node>();
    n->kind = kind;
    n->offset = offset;
    return n;
  }

  // <root> ::= <or>; each level as in the library's grammar, tightest last.
  Expected<NodePtr> parseRoot() {
    if (++nesting_ > kMaxDepth) return fail("expression nested too deeply", peek());
    auto r = parseBinary(0);
    --nesting_;
    return r;
  }

  // Levels: 0 `||`, 1 `&&`, 2 `!` (prefix), 3 comparisons, 4 `+ -`, 5 `* / %`, 6 `^`.
  Expected<NodePtr> parseLevel(int level) {
    if (level == 2) return parseNot();
    if (level == 7) return parseParentheses();
    return parseBinary(level);
  }

  bool startsOperator(int level) const {
    if (peek().type != Tok::kOp) return false;
    const char c = peek().text[0];
    switch (level) {
      case 0: return c == '|';
      case 1: return c == '&';
      case 3: return c == '>' || c == '<' || c == '!' || c == '=';
      case 4: return c == '+' || c == '-';
      case 5: return c == '*' || c == '/' || c == '%';
      case 6: return c == '^';
      default: return false;
    }
  }

  Expected<NodePtr> parseBinary(int level) {
    auto left = parseLevel(level + 1);
    if (!left) return left;
    NodePtr root = std::move(*left);
    while (startsOperator(level)) {
      const Token& op_token = peek();
      const std::size_t offset = op_token.offset;
      auto op = parseOperator();
      if (!op) return op.error();
      auto right = parseLevel(level + 1);
      if (!right) return right;
      auto n = node(Node::Kind::kBinary, offset);
      n->op = *op;
      n->kids = {std::move(root), std::move(*right)};
      auto done = finish(std::move(n));
      if (!done) return done;
      root = std::move(*done);
    }
    return root;
  }

  // The operator at the current token, of one or two tokens (`>=`, `&&`: two tokens, as in
  // the library, so `& &` is `&&` there too).
  Expected<Op> parseOperator() {
    const char first = peek().text[0];
    if (auto s = advance(); !s) return s.error();
    switch (first) {
      case '+': return Op::kAdd;
      case '-': return Op::kSub;
      case '*': return Op::kMul;
      case '/': return Op::kDiv;
      case '%': return Op::kMod;
      case '^': return Op::kPow;
      case '&':
      case '|': {
        if (!isOp(first)) return expected(std::string("'") + first + "' (for '" + first + first + "')");
        if (auto s = advance(); !s) return s.error();
        return first == '&' ? Op::kAnd : Op::kOr;
      }
      default: break;  // comparisons
    }
    if (isOp('=')) {
      if (auto s = advance(); !s) return s.error();
      switch (first) {
        case '!': return Op::kNe;
        case '>': return Op::kGe;
        case '<': return Op::kLe;
        default: return Op::kEq;
      }
    }
    switch (first) {
      case '>': return Op::kGt;
      case '<': return Op::kLt;
      // The library reads a lone '!' here as an operator nothing can evaluate, and a lone
      // '=' as an error; both are errors here.
      case '!': return expected("'=' (for '!=')");
      default: return expected("'=' (for '==')");
    }
  }

  // `!` and unary `-` take a whole expression after them, as the library parses them.
  Expected<NodePtr> parseUnary(Op op) {
    const std::size_t offset = peek().offset;
    if (auto s = advance(); !s) return s.error();
    auto operand = parseRoot();
    if (!operand) return operand;
    auto n = node(Node::Kind::kUnary, offset);
    n->op = op;
    n->kids = {std::move(*operand)};
    return finish(std::move(n));
  }

  Expected<NodePtr> parseNot() {
    if (isOp('!')) return parseUnary(Op::kNot);
    return parseBinary(3);
  }

  Expected<NodePtr> parseParentheses() {
    if (!isOp('(')) {
      if (isOp('-')) return parseUnary(Op::kSub);
      return parseValue();
    }
    if (auto s = advance(); !s) return s.error();
    auto inner = parseRoot();
    if (!inner) return inner;
    if (!isOp(')')) return expected("')'");
    if (auto s = advance(); !s) return s.error();
    return inner;
  }

  Expected<NodePtr> parseValue() {
    const Token& t = peek();
    const bool at_root = at_root_;
    at_root_ = false;
    const bool access = t.type == Tok::kName || (t.type == Tok::kOp && (t.text == "$" || t.text == "@"));
    if (t.type == Tok::kOp && t.text == "@" && at_root) {
      return fail("'@' (the current object) cannot start an expression", t);
    }
    if (access) return parseAccess();
    auto literal = node(Node::Kind::kLiteral, t.offset);
    switch (t.type) {
      case Tok::kString: literal->value = unescape(std::string_view(t.text).substr(1, t.text.size() - 2)); break;
      case Tok::kRawString: literal->value = t.text.substr(1, t.text.size() - 2); break;
      case Tok::kBool: literal->value = t.text == "true"; break;
      case Tok::kInt: {
        std::int64_t v = 0;
        for (char c : t.text) {
          if (v > (std::numeric_limits<std::int64_t>::max() - (c - '0')) / 10) {
            return fail("integer " + t.text + " out of range", t);
          }
          v = v * 10 + (c - '0');
        }
        literal->value = v;
        break;
      }
      case Tok::kFloat: {
        const double v = std::strtod(t.text.c_str(), nullptr);
        if (std::isinf(v)) return fail("float " + t.text + " out of range", t);
        literal->value = v;
        break;
      }
      default:
        return expected("a value (a literal, a name, '$', '(', '-' or '!')");
    }
    if (auto s = advance(); !s) return s.error();
    // The library's look-ahead for clearer messages.
    if (isOp('(')) return fail("an opening parenthesis cannot follow a literal", peek());
    if (isOp('.')) return fail("dot notation cannot follow a literal", peek());
    if (isOp('[')) return fail("bracket access cannot follow a literal", peek());
    return finish(std::move(literal));
  }

  // A name, `$` or a call, then any chain of `.name` and `[expression]`.
  Expected<NodePtr> parseAccess() {
    const Token first = peek();
    if (auto s = advance(); !s) return s.error();
    NodePtr current;
    if (isOp('(')) {
      current = node(Node::Kind::kCall, first.offset);
      current->name = first.text;
      if (auto s = advance(); !s) return s.error();
      if (isOp(')')) {
        if (auto s = advance(); !s) return s.error();
      } else {
        for (;;) {
          auto arg = parseRoot();
          if (!arg) return arg;
          current->kids.push_back(std::move(*arg));
          if (isOp(')')) {
            if (auto s = advance(); !s) return s.error();
            break;
          }
          if (!isOp(',')) return expected("',' or ')'");
          if (auto s = advance(); !s) return s.error();
          if (peek().type == Tok::kEnd) return expected("')'");
        }
      }
    } else {
      current = node(Node::Kind::kIdentifier, first.offset);
      current->name = first.text;
    }
    auto done = finish(std::move(current));
    if (!done) return done;
    current = std::move(*done);
    for (;;) {
      if (isOp('.')) {
        if (auto s = advance(); !s) return s.error();
        if (peek().type != Tok::kName) return expected("a name after '.'");
        auto dot = node(Node::Kind::kDot, peek().offset);
        dot->name = peek().text;
        dot->kids = {std::move(current)};
        if (auto s = advance(); !s) return s.error();
        auto d = finish(std::move(dot));
        if (!d) return d;
        current = std::move(*d);
      } else if (isOp('[')) {
        auto bracket = node(Node::Kind::kBracket, peek().offset);
        if (auto s = advance(); !s) return s.error();
        auto key = parseRoot();
        if (!key) return key;
        if (!isOp(']')) return expected("']'");
        if (auto s = advance(); !s) return s.error();
        bracket->kids = {std::move(current), std::move(*key)};
        auto b = finish(std::move(bracket));
        if (!b) return b;
        current = std::move(*b);
      } else {
        return current;
      }
    }
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  Position* error_at_;
  std::size_t i_ = 0;
  int nesting_ = 0;
  bool at_root_ = true;
};

// ---------------------------------------------------------------------------------------
// Printing

const char* opText(Op op) {
  switch (op) {
    case Op::kAdd: return "+";
    case Op::kSub: return "-";
    case Op::kMul: return "*";
    case Op::kDiv: return "\u00f7";  // the library prints division so
    case Op::kMod: return "%";
    case Op::kPow: return "^";
    case Op::kEq: return "==";
    case Op::kNe: return "!=";
    case Op::kGt: return ">";
    case Op::kLt: return "<";
    case Op::kGe: return ">=";
    case Op::kLe: return "<=";
    case Op::kAnd: return "&&";
    case Op::kOr: return "||";
    case Op::kNot: return "!";
  }
  return "?";
}

std::string literalText(const Json& v) {
  if (v.is_string()) return "\"" + v.get<std::string>() + "\"";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_float()) return detail::formatFloat(v.get<double>(), 'f', -1);
  return v.dump();
}

std::string print(const Node& n) {
  switch (n.kind) {
    case Node::Kind::kLiteral: return literalText(n.value);
    case Node::Kind::kIdentifier: return n.name;
    case Node::Kind::kDot: return print(*n.kids[0]) + "." + n.name;
    case Node::Kind::kBracket: return print(*n.kids[0]) + "[" + print(*n.kids[1]) + "]";
    case Node::Kind::kCall: {
      std::string out = n.name + "(";
      for (std::size_t i = 0; i < n.kids.size(); ++i) out += (i ? ", " : "") + print(*n.kids[i]);
      return out + ")";
    }
    case Node::Kind::kBinary: {
      const auto spine = leftSpine(n);
      std::string out(spine.size(), '(');
      out += print(*spine.back()->kids[0]);
      for (auto it = spine.rbegin(); it != spine.rend(); ++it) {
        out += std::string(") ") + opText((*it)->op) + " (" + print(*(*it)->kids[1]) + ")";
      }
      return out;
    }
    case Node::Kind::kUnary: return std::string(opText(n.op)) + "(" + print(*n.kids[0]) + ") ";
  }
  return "";
}

// ---------------------------------------------------------------------------------------
// Dependencies

struct Reach {
  std::optional<Path> chain;  // the path this node's value is at, while it can be extended
  std::vector<Path> completed;
};

Reach reach(const Node& n, const std::optional<Path>& base);

// The node as an operand: its own path is complete.
std::vector<Path> rootReach(const Node& n, const std::optional<Path>& base = Path{"$"}) {
  Reach r = reach(n, base);
  if (r.chain) r.completed.push_back(std::move(*r.chain));
  return std::move(r.completed);
}

void append(std::vector<Path>& to, std::vector<Path> from) {
  for (auto& p : from) to.push_back(std::move(p));
}

Reach reach(const Node& n, const std::optional<Path>& base) {
  Reach r;
  switch (n.kind) {
    case Node::Kind::kLiteral: break;
    case Node::Kind::kIdentifier:
      if (n.name == "$") {
        r.chain = Path{"$"};
      } else if (base) {
        r.chain = *base;
        r.chain->push_back(n.name);
      }
      break;
    case Node::Kind::kDot: {
      r = reach(*n.kids[0], base);
      if (r.chain) r.chain->push_back(n.name);
      break;
    }
    case Node::Kind::kBracket: {
      r = reach(*n.kids[0], base);
      const Node& key = *n.kids[1];
      if (key.kind == Node::Kind::kLiteral) {
        if (r.chain) r.chain->push_back(key.value);
      } else {
        // A name inside the brackets reads the value being indexed, which the path up to
        // here covers; `$` in it reads the root.
        append(r.completed, rootReach(key, r.chain));
        if (r.chain) {
          r.completed.push_back(std::move(*r.chain));
          r.chain.reset();
        }
      }
      break;
    }
    case Node::Kind::kCall:
      for (const auto& arg : n.kids) append(r.completed, rootReach(*arg));
      break;
    case Node::Kind::kBinary: {
      const auto spine = leftSpine(n);
      append(r.completed, rootReach(*spine.back()->kids[0]));
      for (auto it = spine.rbegin(); it != spine.rend(); ++it) {
        append(r.completed, rootReach(*(*it)->kids[1]));
      }
      break;
    }
    case Node::Kind::kUnary:
      for (const auto& kid : n.kids) append(r.completed, rootReach(*kid));
      break;
  }
  return r;
}

Status checkCalls(const Node& n, std::string_view text) {
  if (n.kind == Node::Kind::kCall) {
    const auto* f = detail::findFunction(n.name);
    if (!f) {
      return Error("unknown function '" + n.name + "' " + where(text, n.offset) +
                   " (functions: " + [] {
                     std::string all;
                     for (const auto& name : functionNames()) all += (all.empty() ? "" : ", ") + name;
                     return all;
                   }() + ")");
    }
    if (n.kids.size() != f->arity) {
      return Error("function '" + n.name + "' takes " + std::to_string(f->arity) +
                   " argument" + (f->arity == 1 ? "" : "s") + ", got " +
                   std::to_string(n.kids.size()) + " " + where(text, n.offset));
    }
  }
  if (n.kind == Node::Kind::kBinary) {
    const auto spine = leftSpine(n);
    if (auto s = checkCalls(*spine.back()->kids[0], text); !s) return s;
    for (auto it = spine.rbegin(); it != spine.rend(); ++it) {
      if (auto s = checkCalls(*(*it)->kids[1], text); !s) return s;
    }
    return Status::Ok();
  }
  for (const auto& kid : n.kids) {
    if (auto s = checkCalls(*kid, text); !s) return s;
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------
// Evaluation

// A value, either within the root (a path's value, not copied) or computed; `path` is how
// it was reached, for messages.
struct Value {
  const Json* ref = nullptr;
  Json owned;
  std::string path;
  const Json& get() const { return ref ? *ref : owned; }
};

Value computed(Json v) {
  Value out;
  out.owned = std::move(v);
  return out;
}

std::string keyText(const Json& key) {
  return key.is_string() ? "\"" + key.get<std::string>() + "\"" : key.dump();
}

std::string objectKeys(const Json& object) {
  std::string keys;
  std::size_t n = 0;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (++n > 20) {
      keys += ", ...";
      break;
    }
    keys += (keys.empty() ? "" : ", ") + it.key();
  }
  return keys.empty() ? "it has none" : "it has " + keys;
}

using U = std::uint64_t;

class Evaluator {
 public:
  Evaluator(std::string_view text, const Json& root, const Context& context)
      : text_(text), root_(root), context_(context) {}

  Expected<Value> eval(const Node& n, const Value& data) {
    switch (n.kind) {
      case Node::Kind::kLiteral: return computed(n.value);
      case Node::Kind::kIdentifier: {
        if (n.name == "$") {
          Value v;
          v.ref = &root_;
          v.path = "$";
          return v;
        }
        return access(data, Json(n.name), n.offset, "." + n.name);
      }
      case Node::Kind::kDot: {
        auto left = eval(*n.kids[0], data);
        if (!left) return left;
        return access(*left, Json(n.name), n.offset, "." + n.name);
      }
      case Node::Kind::kBracket: {
        auto left = eval(*n.kids[0], data);
        if (!left) return left;
        // The key is evaluated with the indexed value as its data, as the library does.
        auto key = eval(*n.kids[1], *left);
        if (!key) return key;
        const Json& k = key->get();
        return access(*left, k, n.offset, "[" + keyText(k) + "]");
      }
      case Node::Kind::kCall: return call(n);
      case Node::Kind::kUnary: return unary(n);
      case Node::Kind::kBinary: return binary(n);
    }
    return Error("bad node");
  }

  Value rootValue() const {
    Value v;
    v.ref = &root_;
    v.path = "$";
    return v;
  }

 private:
  Error errorAt(const std::string& what, std::size_t offset) const {
    return Error(what + " " + where(text_, offset));
  }

  // The library's evaluateMapAccess: an object by key, a list by integer index (negative
  // from the end).
  Expected<Value> access(const Value& from, const Json& key, std::size_t offset,
                         const std::string& step) {
    const Json& data = from.get();
    const std::string base = from.path.empty() ? "(value)" : from.path;
    const std::string path = base + step;
    Value out;
    out.path = path;
    if (data.is_object()) {
      std::string name;
      if (key.is_string()) {
        name = key.get<std::string>();
      } else if (auto i = detail::asInt(key)) {
        name = std::to_string(*i);  // a map with integer keys arrives with them as text
      } else {
        return errorAt("no value at " + path + ": a key of " + base + " cannot be a " +
                           detail::typeName(key),
                       offset);
      }
      auto it = data.find(name);
      if (it == data.end()) {
        return errorAt("no value at " + path + ": " + base + " has no key '" + name + "' (" +
                           objectKeys(data) + ")",
                       offset);
      }
      if (from.ref) {
        out.ref = &*it;
      } else {
        out.owned = *it;
      }
      return out;
    }
    if (data.is_array()) {
      auto index = detail::asInt(key);
      if (!index) {
        return errorAt("no value at " + path + ": " + base + " is a list, indexed by integers, not by a " +
                           detail::typeName(key),
                       offset);
      }
      const auto size = static_cast<std::int64_t>(data.size());
      std::int64_t i = *index;
      if (i >= size || i < -size) {
        return errorAt("no value at " + path + ": index " + std::to_string(i) + " is out of " +
                           base + " (" + std::to_string(size) + " items)",
                       offset);
      }
      if (i < 0) i += size;
      if (from.ref) {
        out.ref = &data[static_cast<std::size_t>(i)];
      } else {
        out.owned = data[static_cast<std::size_t>(i)];
      }
      return out;
    }
    const std::string type = detail::typeName(data);
    return errorAt("no value at " + path + ": " + base + (type == "integer" || type == "object" ? " is an " : " is a ") + type +
                       ", which has no members",
                   offset);
  }

  Expected<Value> call(const Node& n) {
    const auto* f = detail::findFunction(n.name);
    if (!f) return errorAt("unknown function '" + n.name + "'", n.offset);
    std::vector<Json> args;
    args.reserve(n.kids.size());
    for (const auto& kid : n.kids) {
      auto v = eval(*kid, rootValue());
      if (!v) return v.error();
      args.push_back(v->get());
    }
    if (args.size() != f->arity) {
      return errorAt("function '" + n.name + "' takes " + std::to_string(f->arity) + " argument" +
                         (f->arity == 1 ? "" : "s") + ", got " + std::to_string(args.size()),
                     n.offset);
    }
    auto result = f->call(args, context_);
    if (!result) return errorAt(result.error().message(), n.offset);
    if (detail::valueBytes(*result) > detail::kMaxValueBytes)
      return errorAt(detail::tooLarge(n.name).message(), n.offset);
    Value out = computed(std::move(*result));
    out.path = n.name + "(...)";
    return out;
  }

  Expected<Value> unary(const Node& n) {
    auto v = eval(*n.kids[0], rootValue());
    if (!v) return v;
    const Json& x = v->get();
    if (n.op == Op::kNot) {
      if (!x.is_boolean()) {
        return errorAt("'!' needs a bool, got " + detail::typeName(x), n.offset);
      }
      return computed(!x.get<bool>());
    }
    if (auto i = detail::asInt(x)) return computed(static_cast<std::int64_t>(U(0) - U(*i)));
    if (x.is_number_float()) return computed(-x.get<double>());
    return errorAt("'-' needs an integer or a float, got " + detail::typeName(x), n.offset);
  }

  // A chain's left operands that are binary operators in a loop, innermost first.
  Expected<Value> binary(const Node& n) {
    const auto spine = leftSpine(n);
    auto value = eval(*spine.back()->kids[0], rootValue());
    for (auto it = spine.rbegin(); value && it != spine.rend(); ++it) {
      value = applyBinary(**it, *value);
    }
    return value;
  }

  // `n`'s operator on its left operand's value `l` and its right operand.
  Expected<Value> applyBinary(const Node& n, const Value& l) {
    auto r = eval(*n.kids[1], rootValue());
    if (!r) return r;
    const Json& a = l.get();
    const Json& b = r->get();
    const std::string op = opText(n.op);
    const std::string ta = detail::typeName(a);
    const std::string tb = detail::typeName(b);
    if (ta != tb) {
      std::string hint;
      if ((ta == "integer" && tb == "float") || (ta == "float" && tb == "integer")) {
        hint = " (convert one with intToFloat or floatToInt)";
      }
      return errorAt("the two sides of '" + op + "' differ in type: " + ta + " and " + tb + hint,
                     n.offset);
    }
    auto unsupported = [&]() -> Error {
      return errorAt("'" + op + "' does not apply to " + ta + " values", n.offset);
    };
    if (ta == "integer") {
      const std::int64_t x = *detail::asInt(a);
      const std::int64_t y = *detail::asInt(b);
      switch (n.op) {
        // Go's integers wrap around.
        case Op::kAdd: return computed(static_cast<std::int64_t>(U(x) + U(y)));
        case Op::kSub: return computed(static_cast<std::int64_t>(U(x) - U(y)));
        case Op::kMul: return computed(static_cast<std::int64_t>(U(x) * U(y)));
        case Op::kDiv:
        case Op::kMod: {
          if (y == 0) return errorAt("integer division by zero", n.offset);
          if (y == -1) return computed(n.op == Op::kDiv ? static_cast<std::int64_t>(U(0) - U(x)) : 0);
          return computed(n.op == Op::kDiv ? x / y : x % y);
        }
        case Op::kPow: return computed(powToInt(std::pow(static_cast<double>(x), static_cast<double>(y))));
        case Op::kEq: return computed(x == y);
        case Op::kNe: return computed(x != y);
        case Op::kGt: return computed(x > y);
        case Op::kLt: return computed(x < y);
        case Op::kGe: return computed(x >= y);
        case Op::kLe: return computed(x <= y);
        default: return unsupported();
      }
    }
    if (ta == "float") {
      const double x = a.get<double>();
      const double y = b.get<double>();
      switch (n.op) {
        case Op::kAdd: return computed(x + y);
        case Op::kSub: return computed(x - y);
        case Op::kMul: return computed(x * y);
        case Op::kDiv: return computed(x / y);
        case Op::kMod: return computed(std::fmod(x, y));
        case Op::kPow: return computed(std::pow(x, y));
        case Op::kEq: return computed(x == y);
        case Op::kNe: return computed(x != y);
        case Op::kGt: return computed(x > y);
        case Op::kLt: return computed(x < y);
        case Op::kGe: return computed(x >= y);
        case Op::kLe: return computed(x <= y);
        default: return unsupported();
      }
    }
    if (ta == "string") {
      const auto& x = a.get_ref<const std::string&>();
      const auto& y = b.get_ref<const std::string&>();
      switch (n.op) {
        case Op::kAdd:
          if (16 + x.size() + y.size() > detail::kMaxValueBytes)
            return errorAt(detail::tooLarge("'+'").message(), n.offset);
          return computed(x + y);
        case Op::kEq: return computed(x == y);
        case Op::kNe: return computed(x != y);
        case Op::kGt: return computed(x > y);  // bytes compared as unsigned, as Go does
        case Op::kLt: return computed(x < y);
        case Op::kGe: return computed(x >= y);
        case Op::kLe: return computed(x <= y);
        default: return unsupported();
      }
    }
    if (ta == "bool") {
      const bool x = a.get<bool>();
      const bool y = b.get<bool>();
      switch (n.op) {
        case Op::kEq: return computed(x == y);
        case Op::kNe: return computed(x != y);
        case Op::kAnd: return computed(x && y);
        case Op::kOr: return computed(x || y);
        default: return unsupported();
      }
    }
    return unsupported();
  }

  // Go's int64(float64) on amd64, where the engine runs: out of range (and NaN) gives the
  // smallest integer.
  static std::int64_t powToInt(double p) {
    if (!(p > -9223372036854775808.0 - 1.0 && p < 9223372036854775808.0)) {
      return std::numeric_limits<std::int64_t>::min();
    }
    return static_cast<std::int64_t>(p);
  }

  std::string_view text_;
  const Json& root_;
  const Context& context_;
};

}  // namespace

std::string pathText(const Path& path) {
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const Json& item = path[i];
    if (i == 0 && item == "$") {
      out += "$";
    } else if (item.is_string() && matchesWord(item.get<std::string>()) &&
               !isDigit(item.get<std::string>()[0])) {
      out += "." + item.get<std::string>();
    } else {
      out += "[" + keyText(item) + "]";
    }
  }
  return out;
}

Expected<Expression> parseExpression(std::string_view text, Position* error_at) {
  Parser parser(text, error_at);
  auto root = parser.parse();
  if (!root) return root.error();
  Expression e;
  e.text_ = std::string(text);
  e.root_ = std::move(*root);
  return e;
}

Status Expression::check() const { return checkCalls(*root_, text_); }

std::vector<Path> Expression::dependencies() const {
  std::vector<Path> out;
  std::set<std::string> seen;
  for (auto& p : rootReach(*root_)) {
    if (seen.insert(Json(p).dump()).second) out.push_back(std::move(p));
  }
  return out;
}

Expected<Json> Expression::evaluate(const Json& root, const Context& context) const {
  Evaluator evaluator(text_, root, context);
  auto v = evaluator.eval(*root_, evaluator.rootValue());
  if (!v) return v.error();
  if (v->ref) return *v->ref;
  return std::move(v->owned);
}

std::string Expression::tree() const { return print(*root_); }

}  // namespace plugboard::core::arcaflow

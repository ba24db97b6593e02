// The lexers and the one precedence-climbing parser of both dialects
// (core/workflows/expression_tree.h). docs/decisions.md, "Argo expressions", names the
// rules each dialect follows and where they come from.
#include <cctype>
#include <charconv>
#include <optional>

#include "core/workflows/expression_tree.h"

namespace plugboard::core::expression {
namespace {

struct Token {
  enum class Type { kEnd, kNumber, kString, kName, kOp };
  Type type = Type::kEnd;
  std::string text;  // name or operator
  Json value;        // number or string
  std::size_t pos = 0;
};

bool isNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool isNameChar(char c) { return isNameStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

constexpr std::string_view kOps[] = {"?.", "??", "==", "!=", "<=", ">=", "&&", "||", "**", "=~",
                                     "!~", "+",  "-",  "*",  "/",  "%",  "^",  "!",  "<",  ">",
                                     "(",  ")",  "[",  "]",  "{",  "}",  ",",  ":",  "?",  ".",
                                     "#"};

class Lexer {
 public:
  Lexer(std::string_view s, Dialect d) : s_(s), dialect_(d) {}

  Expected<std::vector<Token>> run() {
    std::vector<Token> out;
    while (true) {
      while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
      Token t;
      t.pos = i_ + 1;
      if (i_ == s_.size()) {
        out.push_back(std::move(t));
        return out;
      }
      const char c = s_[i_];
      if (std::isdigit(static_cast<unsigned char>(c))) {
        if (auto st = number(t); !st) return st.error();
      } else if (c == '\'' || c == '"' || (c == '`' && dialect_ == Dialect::kExpr)) {
        if (auto st = quoted(t); !st) return st.error();
      } else if (c == '[' && dialect_ == Dialect::kCondition) {
        // govaluate's [escaped name]: a variable, which Argo's `when` reads as a string.
        auto end = s_.find(']', i_);
        if (end == std::string_view::npos) return errorAt("'[' without ']'", t.pos);
        t.type = Token::Type::kString;
        t.value = std::string(s_.substr(i_ + 1, end - i_ - 1));
        i_ = end + 1;
      } else if (isNameStart(c) && !(c == '$' && dialect_ == Dialect::kCondition)) {
        std::size_t start = i_;
        while (i_ < s_.size() && (isNameChar(s_[i_]) ||
                                  (dialect_ == Dialect::kCondition && s_[i_] == '.'))) {
          ++i_;
        }
        t.type = Token::Type::kName;
        t.text = std::string(s_.substr(start, i_ - start));
      } else {
        for (std::string_view op : kOps) {
          if (s_.substr(i_, op.size()) == op) {
            t.type = Token::Type::kOp;
            t.text = std::string(op);
            break;
          }
        }
        if (t.type != Token::Type::kOp) {
          return errorAt(std::string("unexpected character '") + c + "'", t.pos);
        }
        // "?." before a digit is a ternary's '?' and a number (a ?.5 : 1).
        if (t.text == "?." && i_ + 2 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_ + 2]))) {
          t.text = "?";
        }
        i_ += t.text.size();
      }
      out.push_back(std::move(t));
    }
  }

 private:
  Status number(Token& t) {
    std::size_t start = i_;
    bool fraction = false;
    if (s_.substr(i_, 2) == "0x" || s_.substr(i_, 2) == "0X") {
      i_ += 2;
      while (i_ < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
      std::int64_t v = 0;
      auto text = s_.substr(start + 2, i_ - start - 2);
      if (std::from_chars(text.data(), text.data() + text.size(), v, 16).ec != std::errc{}) {
        return errorAt("bad number '" + std::string(s_.substr(start, i_ - start)) + "'", t.pos);
      }
      t.type = Token::Type::kNumber;
      t.value = dialect_ == Dialect::kCondition ? Json(static_cast<double>(v)) : Json(v);
      return Status::Ok();
    }
    std::string digits;
    auto take = [&] {
      while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) {
        if (s_[i_] != '_') digits += s_[i_];
        ++i_;
      }
    };
    take();
    if (i_ + 1 < s_.size() && s_[i_] == '.' && std::isdigit(static_cast<unsigned char>(s_[i_ + 1]))) {
      fraction = true;
      digits += s_[i_++];
      take();
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      std::size_t save = i_;
      std::string exp = "e";
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) exp += s_[i_++];
      if (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        fraction = true;
        digits += exp;
        take();
      } else {
        i_ = save;
      }
    }
    if (i_ < s_.size() && isNameStart(s_[i_])) {
      while (i_ < s_.size() && isNameChar(s_[i_])) ++i_;
      return errorAt("bad number '" + std::string(s_.substr(start, i_ - start)) + "'", t.pos);
    }
    t.type = Token::Type::kNumber;
    if (fraction || dialect_ == Dialect::kCondition) {
      double d = 0;
      std::from_chars(digits.data(), digits.data() + digits.size(), d);
      t.value = d;
    } else {
      std::int64_t v = 0;
      if (std::from_chars(digits.data(), digits.data() + digits.size(), v).ec != std::errc{}) {
        return errorAt("number '" + digits + "' is too large", t.pos);
      }
      t.value = v;
    }
    return Status::Ok();
  }

  Status quoted(Token& t) {
    const char quote = s_[i_++];
    std::string out;
    while (i_ < s_.size() && s_[i_] != quote) {
      char c = s_[i_++];
      if (c != '\\' || quote == '`') {
        out += c;
        continue;
      }
      if (i_ == s_.size()) break;
      c = s_[i_++];
      if (dialect_ == Dialect::kCondition) {  // govaluate: a backslash keeps the next character
        out += c;
        continue;
      }
      switch (c) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '0': out += '\0'; break;
        case 'u': {
          unsigned code = 0;
          auto hex = s_.substr(i_, 4);
          if (hex.size() != 4 ||
              std::from_chars(hex.data(), hex.data() + 4, code, 16).ptr != hex.data() + 4) {
            return errorAt("bad \\u escape", t.pos);
          }
          i_ += 4;
          // UTF-8 of one code point below 0x10000.
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          break;
        }
        default: out += c;  // \\ \' \" and the rest as written
      }
    }
    if (i_ >= s_.size()) return errorAt(std::string("string without its closing ") + quote, t.pos);
    ++i_;
    t.type = Token::Type::kString;
    t.value = std::move(out);
    return Status::Ok();
  }

  std::string_view s_;
  Dialect dialect_;
  std::size_t i_ = 0;
};

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
      case Token::Type::kString: return "string " + t.value.dump();
      default: return "'" + t.text + "'";
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

  NodePtr expression() {
    if (++depth_ > 200) return fail("expression nested too deeply", peek().pos);
    NodePtr cond = binary(0);
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
      cond = std::move(n);
    }
    --depth_;
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
      left = std::move(n);
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
    auto n = makeNode(Node::Kind::kUnary, t.pos, op);
    ++k_;
    // govaluate's prefixes bind tighter than every binary operator.
    NodePtr operand = dialect_ == Dialect::kCondition ? unary() : binary(prec);
    if (!operand) return nullptr;
    n->kids.push_back(std::move(operand));
    return n;
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
    return expect("]") ? std::move(n) : nullptr;
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
    return expect("}") ? std::move(n) : nullptr;
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
        n = std::move(m);
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
      return expect("]") ? std::move(n) : nullptr;
    }
    if (!from) return fail("expected an index", peek().pos);
    auto n = makeNode(Node::Kind::kIndex, pos);
    n->optional = optional;
    n->kids.push_back(std::move(of));
    n->kids.push_back(std::move(from));
    return expect("]") ? std::move(n) : nullptr;
  }

  NodePtr call(NodePtr callee) {
    std::string fname;
    if (!dottedName(*callee, fname)) return fail("only functions can be called", peek().pos);
    const Node* root = callee.get();
    while (!root->kids.empty()) root = root->kids[0].get();
    const Function* f = findFunction(fname);
    if (!f) return fail("unknown function '" + fname + "'", root->pos);
    auto n = makeNode(Node::Kind::kCall, root->pos, fname);
    ++k_;  // (
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
        arg = std::move(closure);
      } else {
        arg = expression();
        if (!arg) return nullptr;
      }
      n->kids.push_back(std::move(arg));
      if (!isOp(",")) break;
      ++k_;
    }
    return expect(")") ? std::move(n) : nullptr;
  }

  std::vector<Token> t_;
  Dialect dialect_;
  std::size_t k_ = 0;
  int closures_ = 0;
  int depth_ = 0;
  std::optional<Error> error_;
};

}  // namespace

Error errorAt(std::string what, std::size_t pos, Error::Code code) {
  return Error(std::move(what) + " at " + std::to_string(pos), code);
}

Expected<NodePtr> parse(std::string_view text, Dialect dialect) {
  auto tokens = Lexer(text, dialect).run();
  if (!tokens) return tokens.error();
  return Parser(std::move(*tokens), dialect).run();
}

}  // namespace plugboard::core::expression

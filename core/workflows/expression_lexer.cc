// The tokens of both dialects (core/workflows/expression_tree.h): govaluate's for
// kCondition (bare words with dots, [escaped names], all numbers floats), expr-lang's for
// kExpr (ints and floats, escapes in strings, `?.`, `|`, `#`).
#include <cctype>
#include <charconv>

#include "core/workflows/expression_tree.h"

namespace plugboard::core::expression {
namespace {

bool isNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool isNameChar(char c) { return isNameStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

// The operator `rest` starts with, longest first; empty if none.
std::string_view operatorAt(std::string_view rest) {
  static constexpr std::string_view kTwo[] = {"?.", "??", "==", "!=", "<=", ">=",
                                              "&&", "||", "**", "=~", "!~"};
  static constexpr std::string_view kOne = "+-*/%^!<>()[]{},:?.#|";
  if (rest.size() >= 2) {
    for (std::string_view op : kTwo) {
      if (op[0] == rest[0] && op[1] == rest[1]) return op;
    }
  }
  const auto at = kOne.find(rest[0]);
  return at == std::string_view::npos ? std::string_view() : kOne.substr(at, 1);
}

class Lexer {
 public:
  Lexer(std::string_view s, Dialect d) : s_(s), dialect_(d) {}

  Expected<std::vector<Token>> run() {
    std::vector<Token> out;
    out.reserve(s_.size() / 3 + 2);
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
        const std::string_view op = operatorAt(s_.substr(i_));
        if (!op.empty()) {
          t.type = Token::Type::kOp;
          t.text = std::string(op);
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

}  // namespace

Expected<std::vector<Token>> tokenize(std::string_view text, Dialect dialect) {
  return Lexer(text, dialect).run();
}

}  // namespace plugboard::core::expression

// jsonpath(document, path) in `{{=...}}` tags (Argo's util/expr/env/env.go): JSONPath as
// the library Argo uses reads it: a path that names one value ($.a, $[0].b) gives that
// value; one with a wildcard, slice, union, filter or `..` gives the array of what it
// matched. Filters `?(...)` are expressions over `@` in the kExpr dialect.
#include <charconv>

#include "core/workflows/expression_tree.h"

namespace plugboard::core::expression {
namespace {

class PathWalk {
 public:
  PathWalk(std::string_view path, std::size_t pos) : p_(path), pos_(pos) {}

  Expected<Json> run(const Json& document) {
    if (p_.empty() || p_[0] != '$') return fail("a JSONPath starts with '$'");
    i_ = 1;
    std::vector<Json> at{document};
    while (i_ < p_.size()) {
      std::vector<Json> next;
      if (p_.compare(i_, 2, "..") == 0) {
        i_ += 2;
        definite_ = false;
        std::vector<Json> all;
        for (const auto& v : at) descend(v, all);
        at = std::move(all);
        if (i_ < p_.size() && p_[i_] == '[') continue;
        if (Status st = dotted(at, next); !st) return st.error();
      } else if (p_[i_] == '.') {
        ++i_;
        if (Status st = dotted(at, next); !st) return st.error();
      } else if (p_[i_] == '[') {
        if (Status st = bracket(at, next); !st) return st.error();
      } else {
        return fail(std::string("unexpected '") + p_[i_] + "'");
      }
      at = std::move(next);
    }
    if (!definite_) return Json(std::move(at));
    if (at.empty()) {
      std::string text = toJsonText(document);
      if (text.size() > 200) text = text.substr(0, 200) + "...";
      return fail("nothing at this path in " + text);
    }
    return at.front();
  }

 private:
  Error fail(const std::string& what) const {
    return errorAt("jsonpath '" + std::string(p_) + "': " + what, pos_);
  }

  static void descend(const Json& v, std::vector<Json>& out) {
    out.push_back(v);
    if (v.is_structured()) {
      for (const auto& kid : v) descend(kid, out);
    }
  }

  static void children(const Json& v, std::vector<Json>& out) {
    if (v.is_structured()) {
      for (const auto& kid : v) out.push_back(kid);
    }
  }

  Status dotted(const std::vector<Json>& at, std::vector<Json>& next) {
    if (i_ < p_.size() && p_[i_] == '*') {
      ++i_;
      definite_ = false;
      for (const auto& v : at) children(v, next);
      return Status::Ok();
    }
    const std::size_t start = i_;
    while (i_ < p_.size() && p_[i_] != '.' && p_[i_] != '[') ++i_;
    if (i_ == start) return fail("a name is missing after '.'");
    key(at, std::string(p_.substr(start, i_ - start)), next);
    return Status::Ok();
  }

  void key(const std::vector<Json>& at, const std::string& name, std::vector<Json>& next) {
    for (const auto& v : at) {
      if (!v.is_object()) continue;
      auto it = v.find(name);
      if (it != v.end()) next.push_back(*it);
    }
  }

  static bool integer(std::string_view s, std::int64_t& out) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc{} && r.ptr == s.data() + s.size();
  }

  Status bracket(const std::vector<Json>& at, std::vector<Json>& next) {
    // The bracket's end: the ']' outside quotes and parentheses.
    std::size_t end = i_ + 1;
    int depth = 0;
    char quote = 0;
    for (; end < p_.size(); ++end) {
      const char c = p_[end];
      if (quote) {
        if (c == '\\') ++end;
        else if (c == quote) quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '(') {
        ++depth;
      } else if (c == ')') {
        --depth;
      } else if (c == ']' && depth == 0) {
        break;
      }
    }
    if (end >= p_.size()) return fail("'[' without ']'");
    std::string_view inside = p_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    if (inside == "*") {
      definite_ = false;
      for (const auto& v : at) children(v, next);
      return Status::Ok();
    }
    if (!inside.empty() && inside[0] == '?') return filter(inside.substr(1), at, next);
    if (!inside.empty() && (inside[0] == '\'' || inside[0] == '"')) {
      if (inside.size() < 2 || inside.back() != inside[0]) return fail("bad quoted name");
      key(at, std::string(inside.substr(1, inside.size() - 2)), next);
      return Status::Ok();
    }
    if (auto colon = inside.find(':'); colon != std::string_view::npos) {
      definite_ = false;
      for (const auto& v : at) {
        if (!v.is_array()) continue;
        const auto size = static_cast<std::int64_t>(v.size());
        std::int64_t from = 0, to = size;
        auto a = inside.substr(0, colon), b = inside.substr(colon + 1);
        if (!a.empty() && !integer(a, from)) return fail("bad slice");
        if (!b.empty() && !integer(b, to)) return fail("bad slice");
        if (from < 0) from += size;
        if (to < 0) to += size;
        for (std::int64_t k = std::max<std::int64_t>(from, 0); k < std::min(to, size); ++k) {
          next.push_back(v[static_cast<std::size_t>(k)]);
        }
      }
      return Status::Ok();
    }
    std::vector<std::int64_t> indexes;
    std::size_t start = 0;
    while (true) {
      auto comma = inside.find(',', start);
      std::int64_t n = 0;
      if (!integer(inside.substr(start, comma - start), n)) {
        return fail("bad index '" + std::string(inside) + "'");
      }
      indexes.push_back(n);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (indexes.size() > 1) definite_ = false;
    for (const auto& v : at) {
      if (!v.is_array()) continue;
      for (std::int64_t n : indexes) {
        if (n < 0) n += static_cast<std::int64_t>(v.size());
        if (n >= 0 && n < static_cast<std::int64_t>(v.size())) next.push_back(v[static_cast<std::size_t>(n)]);
      }
    }
    return Status::Ok();
  }

  Status filter(std::string_view text, const std::vector<Json>& at, std::vector<Json>& next) {
    definite_ = false;
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    if (text.size() < 2 || text.front() != '(' || text.back() != ')') return fail("a filter is ?(...)");
    // `@` is the element: `#` to the kExpr dialect.
    std::string expr;
    char quote = 0;
    for (char c : text.substr(1, text.size() - 2)) {
      if (quote && c == quote) quote = 0;
      else if (!quote && (c == '\'' || c == '"')) quote = c;
      expr += !quote && c == '@' ? '#' : c;
    }
    auto tree = parse("filter(x, {" + expr + "})", Dialect::kExpr);
    if (!tree) return fail("bad filter: " + tree.error().message());
    const Node& closure = *(*tree)->kids[1];
    const Json empty = Json::object();
    JsonScope none(empty);
    Evaluator evaluator(none, Dialect::kExpr);
    for (const auto& v : at) {
      std::vector<Json> items;
      if (v.is_array()) items = v.get<std::vector<Json>>();
      else children(v, items);
      for (const auto& item : items) {
        auto keep = evaluator.call(closure, item);
        if (keep && keep->is_boolean() && keep->get<bool>()) next.push_back(item);
      }
    }
    return Status::Ok();
  }

  std::string_view p_;
  std::size_t pos_;
  std::size_t i_ = 0;
  bool definite_ = true;
};

}  // namespace

Expected<Json> jsonPath(const Json& document, std::string_view path, std::size_t pos) {
  return PathWalk(path, pos).run(document);
}

}  // namespace plugboard::core::expression

// The evaluator of both dialects (core/workflows/expression_tree.h) and expression.h's
// entry points. docs/decisions.md, "Argo expressions", says which rules come from where.
#include "core/workflows/expression.h"

#include <charconv>
#include <cmath>

#include <re2/re2.h>

#include "core/workflows/expression_tree.h"

namespace plugboard::core {

namespace {

bool isIndex(std::string_view part, std::size_t& i) {
  const char* end = part.data() + part.size();
  auto r = std::from_chars(part.data(), end, i);
  return !part.empty() && r.ec == std::errc{} && r.ptr == end;
}

}  // namespace

std::optional<Json> JsonScope::lookup(std::string_view dotted) const {
  const Json* at = &root_;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = dotted.find('.', start);
    const std::string part(dotted.substr(start, dot - start));
    if (at->is_object()) {
      auto it = at->find(part);
      if (it == at->end()) return std::nullopt;
      at = &*it;
    } else if (std::size_t i = 0; at->is_array() && isIndex(part, i) && i < at->size()) {
      at = &(*at)[i];
    } else {
      return std::nullopt;
    }
    if (dot == std::string_view::npos) return *at;
    start = dot + 1;
  }
}

namespace expression {
namespace {

bool isInt(const Json& v) { return v.is_number_integer(); }
std::int64_t toInt(const Json& v) {
  return v.is_number_unsigned() ? static_cast<std::int64_t>(v.get<std::uint64_t>())
                                : v.get<std::int64_t>();
}

// A member of a variable chain: a name after '.' or a quoted name in brackets.
const std::string* memberName(const Node& n) {
  if (n.kind == Node::Kind::kMember) return &n.text;
  if (n.kind == Node::Kind::kIndex && n.kids[1]->kind == Node::Kind::kLiteral &&
      n.kids[1]->value.is_string()) {
    return &n.kids[1]->value.get_ref<const std::string&>();
  }
  return nullptr;
}

Expected<Json> access(const Json& base, const Json& key, std::size_t pos, bool& missing);

// base.name: as access() with a string key, without making one.
Expected<Json> member(const Json& base, const std::string& name, std::size_t pos, bool& missing) {
  missing = false;
  if (!base.is_object()) return access(base, Json(name), pos, missing);
  auto it = base.find(name);
  if (it != base.end()) return *it;
  missing = true;
  return Json();
}

// base[key] as expr-lang reads it: `missing` is set (and null returned) for an object
// without the key.
Expected<Json> access(const Json& base, const Json& key, std::size_t pos, bool& missing) {
  missing = false;
  if (base.is_object()) {
    if (!key.is_string()) return errorAt("a map's key must be a string, not " + typeName(key), pos);
    auto it = base.find(key.get_ref<const std::string&>());
    if (it != base.end()) return *it;
    missing = true;
    return Json();
  }
  if (base.is_array() || base.is_string()) {
    if (!isNumber(key) || (!isInt(key) && std::trunc(toDouble(key)) != toDouble(key))) {
      return errorAt("cannot index " + typeName(base) + " with " + typeName(key) + " " +
                         toText(key),
                     pos);
    }
    const auto size = static_cast<std::int64_t>(base.is_array() ? base.size()
                                                                : base.get_ref<const std::string&>().size());
    std::int64_t i = isInt(key) ? toInt(key) : static_cast<std::int64_t>(toDouble(key));
    if (i < 0) i += size;
    if (i < 0 || i >= size) {
      return errorAt("index " + toText(key) + " out of range (length " + std::to_string(size) + ")",
                     pos);
    }
    if (base.is_array()) return base[static_cast<std::size_t>(i)];
    return Json(std::string(1, base.get_ref<const std::string&>()[static_cast<std::size_t>(i)]));
  }
  if (base.is_null()) return errorAt("cannot fetch " + toText(key) + " from nil", pos);
  return errorAt("cannot fetch " + toText(key) + " from " + typeName(base), pos);
}

Expected<bool> needBool(const Json& v, std::string_view op, std::size_t pos) {
  if (v.is_boolean()) return v.get<bool>();
  return errorAt("'" + std::string(op) + "' needs booleans, not " + typeName(v) + " " + toText(v),
                 pos);
}

Error mismatch(std::string_view op, const Json& a, const Json& b, std::size_t pos) {
  return errorAt("'" + std::string(op) + "' cannot take " + typeName(a) + " " + toText(a) +
                     " and " + typeName(b) + " " + toText(b),
                 pos);
}

Expected<Json> arithmetic(const std::string& op, const Json& a, const Json& b, Dialect d,
                          std::size_t pos) {
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      return Json(a.get_ref<const std::string&>() + b.get_ref<const std::string&>());
    }
    if (d == Dialect::kCondition && (a.is_string() || b.is_string())) {  // govaluate concatenates
      return Json(toText(a) + toText(b));
    }
    if (d == Dialect::kExpr && a.is_array() && b.is_array()) {
      Json out = a;
      for (const auto& v : b) out.push_back(v);
      return out;
    }
  }
  if (!isNumber(a) || !isNumber(b)) return mismatch(op, a, b, pos);
  const bool ints = isInt(a) && isInt(b);
  if (op == "%") {
    if (d == Dialect::kCondition) return Json(std::fmod(toDouble(a), toDouble(b)));
    if (!ints) return mismatch(op, a, b, pos);
    if (toInt(b) == 0) return errorAt("integer divide by zero", pos);
    return Json(toInt(a) % toInt(b));
  }
  if (op == "/") return Json(toDouble(a) / toDouble(b));
  if (op == "**") return Json(std::pow(toDouble(a), toDouble(b)));
  if (ints) {
    const std::int64_t x = toInt(a), y = toInt(b);
    if (op == "+") return Json(x + y);
    if (op == "-") return Json(x - y);
    return Json(x * y);
  }
  const double x = toDouble(a), y = toDouble(b);
  if (op == "+") return Json(x + y);
  if (op == "-") return Json(x - y);
  return Json(x * y);
}

Expected<Json> compare(const std::string& op, const Json& a, const Json& b, std::size_t pos) {
  int c = 0;
  if (isNumber(a) && isNumber(b)) {
    if (isInt(a) && isInt(b)) {
      c = toInt(a) < toInt(b) ? -1 : toInt(a) > toInt(b) ? 1 : 0;
    } else {
      c = toDouble(a) < toDouble(b) ? -1 : toDouble(a) > toDouble(b) ? 1 : 0;
    }
  } else if (a.is_string() && b.is_string()) {
    c = a.get_ref<const std::string&>().compare(b.get_ref<const std::string&>());
  } else {
    return mismatch(op, a, b, pos);
  }
  if (op == "<") return Json(c < 0);
  if (op == "<=") return Json(c <= 0);
  if (op == ">") return Json(c > 0);
  return Json(c >= 0);
}

Expected<bool> matches(const Json& text, const Json& pattern, std::size_t pos) {
  if (!text.is_string() || !pattern.is_string()) {
    return mismatch("matches", text, pattern, pos);
  }
  RE2 re(pattern.get_ref<const std::string&>(), RE2::Quiet);
  if (!re.ok()) {
    return errorAt("bad regular expression '" + pattern.get<std::string>() + "': " + re.error(),
                   pos);
  }
  return RE2::PartialMatch(text.get_ref<const std::string&>(), re);
}

Expected<bool> contained(const Json& item, const Json& in, std::size_t pos) {
  if (in.is_array()) {
    for (const auto& v : in) {
      if (equal(item, v)) return true;
    }
    return false;
  }
  if (in.is_object() && item.is_string()) return in.contains(item.get_ref<const std::string&>());
  return mismatch("in", item, in, pos);
}

}  // namespace

Expected<Json> Evaluator::eval(const Node& n) {
  switch (n.kind) {
    case Node::Kind::kLiteral:
      return n.value;
    case Node::Kind::kName:
    case Node::Kind::kMember:
      return variable(n, false);
    case Node::Kind::kIndex:
      return memberName(n) ? variable(n, false) : index(n, false);
    case Node::Kind::kPointer:
      return *elements_.back();
    case Node::Kind::kUnary:
      return unary(n);
    case Node::Kind::kBinary:
      return binary(n);
    case Node::Kind::kTernary: {
      auto cond = eval(*n.kids[0]);
      if (!cond) return cond;
      auto yes = needBool(*cond, "?:", n.pos);
      if (!yes) return yes.error();
      return eval(*n.kids[*yes ? 1 : 2]);
    }
    case Node::Kind::kArray: {
      Json out = Json::array();
      for (const auto& kid : n.kids) {
        auto v = eval(*kid);
        if (!v) return v;
        out.push_back(std::move(*v));
      }
      return out;
    }
    case Node::Kind::kMap: {
      Json out = Json::object();
      for (std::size_t i = 0; i + 1 < n.kids.size(); i += 2) {
        auto v = eval(*n.kids[i + 1]);
        if (!v) return v;
        out[n.kids[i]->value.get<std::string>()] = std::move(*v);
      }
      return out;
    }
    case Node::Kind::kCall: {
      const Function* f = findFunction(n.text);
      if (f->lazy) return f->lazy(*this, n);
      std::vector<Json> args;
      args.reserve(n.kids.size());
      for (const auto& kid : n.kids) {
        auto v = eval(*kid);
        if (!v) return v;
        args.push_back(std::move(*v));
      }
      return f->plain(args, n.pos);
    }
    case Node::Kind::kSlice: {
      auto base = eval(*n.kids[0]);
      if (!base) return base;
      if (base->is_null() && n.optional) return Json();
      if (!base->is_array() && !base->is_string()) {
        return errorAt("cannot slice " + typeName(*base), n.pos);
      }
      const auto size = static_cast<std::int64_t>(
          base->is_array() ? base->size() : base->get_ref<const std::string&>().size());
      std::int64_t bound[2] = {0, size};
      for (int k = 0; k < 2; ++k) {
        auto v = eval(*n.kids[1 + k]);
        if (!v) return v;
        if (v->is_null()) continue;
        if (!isInt(*v)) return errorAt("a slice's bounds must be integers", n.pos);
        bound[k] = toInt(*v);
        if (bound[k] < 0) bound[k] += size;
        bound[k] = std::clamp<std::int64_t>(bound[k], 0, size);
      }
      if (bound[1] < bound[0]) bound[1] = bound[0];
      if (base->is_string()) {
        return Json(base->get_ref<const std::string&>().substr(
            static_cast<std::size_t>(bound[0]), static_cast<std::size_t>(bound[1] - bound[0])));
      }
      return Json(Json::array_t(base->begin() + bound[0], base->begin() + bound[1]));
    }
    case Node::Kind::kClosure:
      break;
  }
  return errorAt("a closure outside a function's arguments", n.pos);
}

Expected<Json> Evaluator::call(const Node& closure, const Json& element) {
  elements_.push_back(&element);
  auto v = eval(*closure.kids[0]);
  elements_.pop_back();
  return v;
}

Expected<Json> Evaluator::variable(const Node& node, bool guarded) {
  // The chain of names from the root: a.b['c'].d
  std::vector<const Node*> links;
  const Node* at = &node;
  while (at->kind != Node::Kind::kName) {
    if (!memberName(*at)) {
      // Not a chain of names: `f(x).a`, `#.a`, `a[i].b`.
      auto base = eval(*at);
      if (!base) return base;
      Json value = std::move(*base);
      for (auto it = links.rbegin(); it != links.rend(); ++it) {
        if (value.is_null() && ((*it)->optional || guarded)) return Json();
        bool missing = false;
        auto next = member(value, *memberName(**it), (*it)->pos, missing);
        if (!next) return next;
        value = std::move(*next);
      }
      return value;
    }
    links.push_back(at);
    guarded = guarded || at->optional;
    at = at->kids[0].get();
  }
  std::vector<const std::string*> names{&at->text};
  for (auto it = links.rbegin(); it != links.rend(); ++it) names.push_back(memberName(**it));
  std::string dotted;
  for (std::size_t k = 0; k < names.size(); ++k) dotted += (k ? "." : "") + *names[k];
  // The longest name the scope knows, then index the rest.
  std::string prefix = dotted;
  for (std::size_t count = names.size(); count > 0; --count) {
    if (count < names.size()) prefix.resize(prefix.size() - names[count]->size() - 1);
    std::optional<Json> found = scope_.lookup(prefix);
    if (!found) continue;
    Json value = std::move(*found);
    for (std::size_t k = count; k < names.size(); ++k) {
      const Node& link = *links[names.size() - 1 - k];
      if (value.is_null() && (link.optional || guarded)) return Json();
      bool missing = false;
      auto next = member(value, *names[k], link.pos, missing);
      if (!next) return next;
      if (missing && !guarded) {
        return errorAt("unknown variable '" + dotted + "'", at->pos, Error::Code::kNotFound);
      }
      value = std::move(*next);
    }
    return value;
  }
  if (guarded) return Json();
  return errorAt("unknown variable '" + dotted + "'", at->pos, Error::Code::kNotFound);
}

Expected<Json> Evaluator::index(const Node& n, bool guarded) {
  auto base = n.kids[0]->kind == Node::Kind::kIndex && !memberName(*n.kids[0])
                  ? index(*n.kids[0], guarded || n.optional)
                  : eval(*n.kids[0]);
  if (!base) return base;
  if (base->is_null() && (n.optional || guarded)) return Json();
  auto key = eval(*n.kids[1]);
  if (!key) return key;
  bool missing = false;
  return access(*base, *key, n.kids[1]->pos, missing);
}

Expected<Json> Evaluator::unary(const Node& n) {
  auto v = eval(*n.kids[0]);
  if (!v) return v;
  if (n.text == "!") {
    auto b = needBool(*v, "!", n.pos);
    if (!b) return b.error();
    return Json(!*b);
  }
  if (!isNumber(*v)) {
    return errorAt("'" + n.text + "' needs a number, not " + typeName(*v) + " " + toText(*v), n.pos);
  }
  if (n.text == "+") return v;
  return isInt(*v) ? Json(-toInt(*v)) : Json(-toDouble(*v));
}

Expected<Json> Evaluator::binary(const Node& n) {
  // `a + b + c` is ((a + b) + c): the chain of left operands that are binary operators is
  // walked in a loop, innermost first, so that a flat chain of any length takes no stack.
  std::vector<const Node*> spine{&n};
  while (spine.back()->kids[0]->kind == Node::Kind::kBinary) {
    spine.push_back(spine.back()->kids[0].get());
  }
  const Node& left = *spine.back()->kids[0];
  auto a = spine.back()->text == "??" && (left.kind == Node::Kind::kName || memberName(left))
               ? variable(left, true)
           : spine.back()->text == "??" && left.kind == Node::Kind::kIndex ? index(left, true)
                                                                           : eval(left);
  for (auto it = spine.rbegin(); a && it != spine.rend(); ++it)
    a = applyBinary(**it, std::move(*a));
  return a;
}

Expected<Json> Evaluator::applyBinary(const Node& n, Json left) {
  const std::string& op = n.text;
  if (op == "&&" || op == "||") {
    auto x = needBool(left, op, n.pos);
    if (!x) return x.error();
    if (*x == (op == "||")) return Json(*x);
    auto b = eval(*n.kids[1]);
    if (!b) return b;
    auto y = needBool(*b, op, n.pos);
    if (!y) return y.error();
    return Json(*y);
  }
  if (op == "??") {
    if (!left.is_null()) return left;
    return eval(*n.kids[1]);
  }
  const Json* a = &left;
  auto b = eval(*n.kids[1]);
  if (!b) return b;
  if (op == "==") return Json(equal(*a, *b));
  if (op == "!=") return Json(!equal(*a, *b));
  if (op == "<" || op == "<=" || op == ">" || op == ">=") return compare(op, *a, *b, n.pos);
  if (op == "+" || op == "-" || op == "*" || op == "/" || op == "%" || op == "**") {
    return arithmetic(op, *a, *b, dialect_, n.pos);
  }
  const bool negate = op.rfind("not ", 0) == 0 || op == "!~";
  const std::string base = op.rfind("not ", 0) == 0 ? op.substr(4) : op;
  Expected<bool> result = false;
  if (base == "in") {
    result = contained(*a, *b, n.pos);
  } else if (base == "matches" || base == "=~" || base == "!~") {
    result = matches(*a, *b, n.pos);
  } else if (a->is_string() && b->is_string()) {
    const auto& s = a->get_ref<const std::string&>();
    const auto& t = b->get_ref<const std::string&>();
    if (base == "contains") result = s.find(t) != std::string::npos;
    if (base == "startsWith") result = s.rfind(t, 0) == 0;
    if (base == "endsWith") result = s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
  } else {
    return mismatch(base, *a, *b, n.pos);
  }
  if (!result) return result.error();
  return Json(*result != negate);
}

}  // namespace expression

Expected<Json> evaluate(std::string_view text, Dialect dialect, const Scope& scope) {
  auto tree = expression::parse(text, dialect);
  if (!tree) return tree.error();
  expression::Evaluator evaluator(scope, dialect);
  return evaluator.eval(**tree);
}

Expected<bool> evaluateCondition(std::string_view text, Dialect dialect, const Scope& scope) {
  auto v = evaluate(text, dialect, scope);
  if (!v) return v.error();
  if (v->is_boolean()) return v->get<bool>();
  if (dialect == Dialect::kExpr && v->is_string()) {
    if (*v == "true") return true;
    if (*v == "false") return false;
  }
  return Error("'" + std::string(text) + "' is " + expression::typeName(*v) + " " +
               expression::toText(*v) + ", not a boolean");
}

Status checkExpression(std::string_view text, Dialect dialect) {
  auto tree = expression::parse(text, dialect);
  if (!tree) return tree.error();
  return Status::Ok();
}

}  // namespace plugboard::core

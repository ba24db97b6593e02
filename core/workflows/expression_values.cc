// Values as the expression dialects see them (core/workflows/expression_tree.h): types,
// equality and text, with numbers written as Go writes them, since Argo's values pass
// through Go's fmt and encoding/json.
#include <charconv>
#include <cmath>

#include "core/workflows/expression_tree.h"

namespace plugboard::core::expression {
namespace {

void appendNumber(std::string& out, const Json& v) {
  if (!v.is_number_float()) {
    out += v.dump();
    return;
  }
  const double d = v.get<double>();
  if (std::isnan(d)) {
    out += "NaN";
    return;
  }
  if (std::isinf(d)) {
    out += d > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buf[64];
  const double a = std::fabs(d);
  // encoding/json: plain digits from 1e-6 to 1e21, exponent form outside.
  auto fmt = (a == 0 || (a >= 1e-6 && a < 1e21)) ? std::chars_format::fixed
                                                  : std::chars_format::scientific;
  auto r = std::to_chars(buf, buf + sizeof buf, d, fmt);
  out.append(buf, r.ptr);
}

void appendJson(std::string& out, const Json& v) {
  if (v.is_object()) {
    out += '{';
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) out += ',';
      first = false;
      out += Json(it.key()).dump();
      out += ':';
      appendJson(out, it.value());
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) out += ',';
      appendJson(out, v[i]);
    }
    out += ']';
  } else if (v.is_number()) {
    appendNumber(out, v);
  } else {
    out += v.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

}  // namespace

bool isNumber(const Json& v) { return v.is_number(); }

double toDouble(const Json& v) {
  if (v.is_number_float()) return v.get<double>();
  if (v.is_number_unsigned()) return static_cast<double>(v.get<std::uint64_t>());
  return static_cast<double>(v.get<std::int64_t>());
}

std::string typeName(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "nil";
    case Json::value_t::boolean: return "bool";
    case Json::value_t::string: return "string";
    case Json::value_t::number_float: return "float";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "int";
    case Json::value_t::array: return "array";
    case Json::value_t::object: return "map";
    default: return "value";
  }
}

std::string toText(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  return toJsonText(v);
}

std::string toJsonText(const Json& v) {
  std::string out;
  appendJson(out, v);
  return out;
}

bool equal(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) {
    if (!a.is_number_float() && !b.is_number_float()) {
      if (a.is_number_unsigned() || b.is_number_unsigned()) return a == b;
      return a.get<std::int64_t>() == b.get<std::int64_t>();
    }
    return toDouble(a) == toDouble(b);
  }
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!equal(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      if (other == b.end() || !equal(it.value(), *other)) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace plugboard::core::expression

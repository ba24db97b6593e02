// The functions of the kExpr dialect: expr-lang's builtins that Argo's expressions use, and
// the ones Argo adds to every `{{=...}}` tag (asInt, asFloat, toJson, jsonpath, sprig.*:
// Argo's util/expr/env/env.go). Those of collections live in expression_lists.cc, Sprig's
// in expression_sprig.cc.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "core/base/text.h"
#include "core/workflows/expression_tree.h"

namespace plugboard::core::expression {

// expression_sprig.cc
const Function* findSprigFunction(std::string_view name);
// expression_lists.cc
void addListFunctions(std::map<std::string_view, Function>& table);
// expression_encodings.cc
Expected<std::string> base64Decode(const std::string& text, std::size_t pos);
std::string base64Encode(const std::string& text);

Status checkArity(const std::vector<Json>& args, std::size_t min, std::size_t max, const char* name,
                  std::size_t pos) {
  if (args.size() >= min && args.size() <= max) return Status::Ok();
  std::string want = min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max);
  return errorAt(std::string(name) + "() takes " + want + " argument" + (max == 1 ? "" : "s") +
                     ", not " + std::to_string(args.size()),
                 pos);
}

Error wrongType(const char* name, const Json& v, std::size_t pos) {
  return errorAt(std::string(name) + "() cannot take " + typeName(v) + " " + toText(v), pos);
}

namespace {

using Args = std::vector<Json>;

#define PB_ARITY(min, max, name) \
  if (Status st = checkArity(args, min, max, name, pos); !st) return st.error()

Expected<Json> toInteger(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "int");
  const Json& v = args[0];
  if (v.is_number_integer()) return v;
  if (v.is_number_float()) return Json(static_cast<std::int64_t>(v.get<double>()));
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    std::int64_t i = 0;
    const char* begin = s.data() + (s.size() > 1 && s[0] == '+' ? 1 : 0);
    auto r = std::from_chars(begin, s.data() + s.size(), i);
    if (r.ec == std::errc{} && r.ptr == s.data() + s.size() && !s.empty()) return Json(i);
    return errorAt("'" + s + "' is not an integer", pos);
  }
  return wrongType("int", v, pos);
}

Expected<Json> toFloat(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "float");
  const Json& v = args[0];
  if (v.is_number()) return Json(toDouble(v));
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    double d = 0;
    const char* begin = s.data() + (s.size() > 1 && s[0] == '+' ? 1 : 0);
    auto r = std::from_chars(begin, s.data() + s.size(), d);
    if (r.ec == std::errc{} && r.ptr == s.data() + s.size() && !s.empty()) return Json(d);
    return errorAt("'" + s + "' is not a number", pos);
  }
  return wrongType("float", v, pos);
}

Expected<Json> toStr(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "string");
  return Json(toText(args[0]));
}

Expected<Json> length(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "len");
  const Json& v = args[0];
  if (v.is_string()) {  // characters, not bytes
    const auto& s = v.get_ref<const std::string&>();
    return Json(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
  }
  if (v.is_array() || v.is_object()) return Json(v.size());
  return wrongType("len", v, pos);
}

Expected<Json> toJsonCompact(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "toJson");
  return Json(toJsonText(args[0]));
}

Expected<Json> toJsonIndented(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "toJSON");
  return Json(args[0].dump(2));
}

Expected<Json> fromJson(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "fromJSON");
  if (!args[0].is_string()) return wrongType("fromJSON", args[0], pos);
  Json v = Json::parse(args[0].get_ref<const std::string&>(), nullptr, false);
  if (v.is_discarded()) return errorAt("fromJSON(): not JSON: " + args[0].get<std::string>(), pos);
  return v;
}

Expected<Json> jsonpathOf(const Args& args, std::size_t pos) {
  PB_ARITY(2, 2, "jsonpath");
  if (!args[1].is_string()) return wrongType("jsonpath", args[1], pos);
  Json document = args[0];
  if (document.is_string()) {  // Argo's jsonpath() takes JSON text
    document = Json::parse(args[0].get_ref<const std::string&>(), nullptr, false);
    if (document.is_discarded()) {
      return errorAt("jsonpath(): not JSON: " + args[0].get<std::string>(), pos);
    }
  }
  return jsonPath(document, args[1].get_ref<const std::string&>(), pos);
}

template <class F>
Expected<Json> stringFunction(const Args& args, std::size_t pos, const char* name, F f) {
  PB_ARITY(1, 1, name);
  if (!args[0].is_string()) return wrongType(name, args[0], pos);
  std::string s = args[0].get<std::string>();
  f(s);
  return Json(std::move(s));
}

Expected<Json> upper(const Args& args, std::size_t pos) {
  return stringFunction(args, pos, "upper", [](std::string& s) { s = toUpperUnicode(s); });
}
Expected<Json> lower(const Args& args, std::size_t pos) {
  return stringFunction(args, pos, "lower", [](std::string& s) { s = toLowerUnicode(s); });
}

Expected<Json> trim(const Args& args, std::size_t pos) {
  PB_ARITY(1, 2, "trim");
  if (!args[0].is_string()) return wrongType("trim", args[0], pos);
  const std::string cut = args.size() == 2 && args[1].is_string() ? args[1].get<std::string>()
                                                                  : std::string(" \t\n\r\v\f");
  const auto& s = args[0].get_ref<const std::string&>();
  auto b = s.find_first_not_of(cut);
  if (b == std::string::npos) return Json("");
  return Json(s.substr(b, s.find_last_not_of(cut) - b + 1));
}

Expected<Json> split(const Args& args, std::size_t pos) {
  PB_ARITY(2, 2, "split");
  if (!args[0].is_string() || !args[1].is_string()) return wrongType("split", args[0], pos);
  const auto& s = args[0].get_ref<const std::string&>();
  const auto& sep = args[1].get_ref<const std::string&>();
  Json out = Json::array();
  if (sep.empty()) {
    for (char c : s) out.push_back(std::string(1, c));
    return out;
  }
  std::size_t start = 0;
  for (auto at = s.find(sep); at != std::string::npos; at = s.find(sep, start)) {
    out.push_back(s.substr(start, at - start));
    start = at + sep.size();
  }
  out.push_back(s.substr(start));
  return out;
}

Expected<Json> join(const Args& args, std::size_t pos) {
  PB_ARITY(1, 2, "join");
  if (!args[0].is_array()) return wrongType("join", args[0], pos);
  const std::string sep = args.size() == 2 ? toText(args[1]) : "";
  std::string out;
  for (std::size_t i = 0; i < args[0].size(); ++i) out += (i ? sep : "") + toText(args[0][i]);
  return Json(out);
}

Expected<Json> replace(const Args& args, std::size_t pos) {
  PB_ARITY(3, 3, "replace");
  for (const auto& a : args) {
    if (!a.is_string()) return wrongType("replace", a, pos);
  }
  std::string s = args[0].get<std::string>();
  const auto& from = args[1].get_ref<const std::string&>();
  const auto& to = args[2].get_ref<const std::string&>();
  if (from.empty()) return Json(s);
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return Json(s);
}

Expected<Json> numbersOf(const Args& args, std::size_t pos, const char* name, bool want_max) {
  const Args& list = args.size() == 1 && args[0].is_array() ? args[0].get_ref<const Json::array_t&>() : args;
  if (list.empty()) return errorAt(std::string(name) + "() of nothing", pos);
  const Json* best = nullptr;
  for (const auto& v : list) {
    if (!isNumber(v)) return wrongType(name, v, pos);
    if (!best || (want_max ? toDouble(v) > toDouble(*best) : toDouble(v) < toDouble(*best))) best = &v;
  }
  return *best;
}
Expected<Json> maxOf(const Args& args, std::size_t pos) { return numbersOf(args, pos, "max", true); }
Expected<Json> minOf(const Args& args, std::size_t pos) { return numbersOf(args, pos, "min", false); }

Expected<Json> absOf(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "abs");
  if (!isNumber(args[0])) return wrongType("abs", args[0], pos);
  if (args[0].is_number_float()) return Json(std::fabs(args[0].get<double>()));
  return Json(std::llabs(args[0].get<std::int64_t>()));
}

template <double (*F)(double)>
Expected<Json> rounding(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "round");
  if (!isNumber(args[0])) return wrongType("round", args[0], pos);
  return Json(F(toDouble(args[0])));
}

Expected<Json> typeOf(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "type");
  return Json(typeName(args[0]));
}

Expected<Json> toBase64(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "toBase64");
  if (!args[0].is_string()) return wrongType("toBase64", args[0], pos);
  return Json(base64Encode(args[0].get<std::string>()));
}
Expected<Json> fromBase64(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "fromBase64");
  if (!args[0].is_string()) return wrongType("fromBase64", args[0], pos);
  auto s = base64Decode(args[0].get<std::string>(), pos);
  if (!s) return s.error();
  return Json(std::move(*s));
}

// filter, map, all, any, none, one, count, find, findIndex, findLast, findLastIndex.
enum class Pair { kIndexOf, kLastIndexOf, kHasPrefix, kHasSuffix, kTrimPrefix, kTrimSuffix };
template <Pair P>
Expected<Json> stringPair(const Args& args, std::size_t pos) {
  static constexpr const char* kNames[] = {"indexOf", "lastIndexOf", "hasPrefix", "hasSuffix", "trimPrefix", "trimSuffix"};
  const char* name = kNames[static_cast<int>(P)];
  PB_ARITY(2, 2, name);
  for (const auto& a : args) {
    if (!a.is_string()) return wrongType(name, a, pos);
  }
  const auto& s = args[0].get_ref<const std::string&>();
  const auto& t = args[1].get_ref<const std::string&>();
  const bool prefix = s.rfind(t, 0) == 0;
  const bool suffix = s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
  switch (P) {
    case Pair::kIndexOf: {
      auto at = s.find(t);
      return Json(at == std::string::npos ? -1 : static_cast<std::int64_t>(at));
    }
    case Pair::kLastIndexOf: {
      auto at = s.rfind(t);
      return Json(at == std::string::npos ? -1 : static_cast<std::int64_t>(at));
    }
    case Pair::kHasPrefix: return Json(prefix);
    case Pair::kHasSuffix: return Json(suffix);
    case Pair::kTrimPrefix: return Json(prefix ? s.substr(t.size()) : s);
    case Pair::kTrimSuffix: return Json(suffix ? s.substr(0, s.size() - t.size()) : s);
  }
  return Json();
}

Expected<Json> repeatOf(const Args& args, std::size_t pos) {
  PB_ARITY(2, 2, "repeat");
  if (!args[0].is_string() || !args[1].is_number_integer()) return wrongType("repeat", args[0], pos);
  const std::int64_t n = args[1].get<std::int64_t>();
  if (n < 0) return errorAt("repeat() of a negative count", pos);
  if (static_cast<std::uint64_t>(n) * args[0].get_ref<const std::string&>().size() > (1u << 20)) {
    return errorAt("repeat() would make more than 1 MiB", pos);
  }
  std::string out;
  for (std::int64_t i = 0; i < n; ++i) out += args[0].get_ref<const std::string&>();
  return Json(out);
}

#undef PB_ARITY

const std::map<std::string_view, Function>& functions() {
  static const std::map<std::string_view, Function> table = [] {
    std::map<std::string_view, Function> t = {
      // Argo's (util/expr/env/env.go)
        {"asInt", {toInteger}},
        {"asFloat", {toFloat}},
        {"toJson", {toJsonCompact}},
        {"jsonpath", {jsonpathOf}},
      // expr-lang's
        {"int", {toInteger}},
        {"float", {toFloat}},
        {"string", {toStr}},
        {"len", {length}},
        {"toJSON", {toJsonIndented}},
        {"fromJSON", {fromJson}},
        {"upper", {upper}},
        {"lower", {lower}},
        {"trim", {trim}},
        {"split", {split}},
        {"join", {join}},
        {"replace", {replace}},
        {"max", {maxOf}},
        {"min", {minOf}},
        {"abs", {absOf}},
        {"ceil", {rounding<std::ceil>}},
        {"floor", {rounding<std::floor>}},
        {"round", {rounding<std::round>}},
        {"type", {typeOf}},
        {"toBase64", {toBase64}},
        {"fromBase64", {fromBase64}},
        {"indexOf", {stringPair<Pair::kIndexOf>}},
        {"lastIndexOf", {stringPair<Pair::kLastIndexOf>}},
        {"hasPrefix", {stringPair<Pair::kHasPrefix>}},
        {"hasSuffix", {stringPair<Pair::kHasSuffix>}},
        {"trimPrefix", {stringPair<Pair::kTrimPrefix>}},
        {"trimSuffix", {stringPair<Pair::kTrimSuffix>}},
        {"repeat", {repeatOf}},
    };
    addListFunctions(t);
    return t;
  }();
  return table;
}

}  // namespace

const Function* findFunction(std::string_view name) {
  if (name.rfind("sprig.", 0) == 0) return findSprigFunction(name.substr(6));
  auto it = functions().find(name);
  return it == functions().end() ? nullptr : &it->second;
}

}  // namespace plugboard::core::expression

// The functions of the kExpr dialect: expr-lang's builtins that Argo's expressions use, and
// the ones Argo adds to every `{{=...}}` tag (asInt, asFloat, toJson, jsonpath, sprig.*:
// Argo's util/expr/env/env.go). Sprig's live in expression_sprig.cc.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "core/workflows/expression_tree.h"

namespace plugboard::core::expression {

// expression_sprig.cc
const Function* findSprigFunction(std::string_view name);
Expected<std::string> base64Decode(const std::string& text, std::size_t pos);
std::string base64Encode(const std::string& text);

namespace {

using Args = std::vector<Json>;

Status arity(const Args& args, std::size_t min, std::size_t max, const char* name,
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

#define PB_ARITY(min, max, name)                                   \
  if (Status st = arity(args, min, max, name, pos); !st) return st.error()

// expr-lang's int(): integers as they are, floats truncated, strings as Go's Atoi reads them.
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
  return stringFunction(args, pos, "upper", [](std::string& s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  });
}
Expected<Json> lower(const Args& args, std::size_t pos) {
  return stringFunction(args, pos, "lower", [](std::string& s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
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

Expected<Json> keysOf(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "keys");
  if (!args[0].is_object()) return wrongType("keys", args[0], pos);
  Json out = Json::array();
  for (auto it = args[0].begin(); it != args[0].end(); ++it) out.push_back(it.key());
  return out;
}

Expected<Json> valuesOf(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "values");
  if (!args[0].is_object()) return wrongType("values", args[0], pos);
  Json out = Json::array();
  for (const auto& v : args[0]) out.push_back(v);
  return out;
}

Expected<Json> firstOf(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "first");
  if (!args[0].is_array()) return wrongType("first", args[0], pos);
  return args[0].empty() ? Json() : args[0].front();
}
Expected<Json> lastOf(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "last");
  if (!args[0].is_array()) return wrongType("last", args[0], pos);
  return args[0].empty() ? Json() : args[0].back();
}

Expected<Json> sumOf(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "sum");
  if (!args[0].is_array()) return wrongType("sum", args[0], pos);
  Json total = 0;
  for (const auto& v : args[0]) {
    if (!isNumber(v)) return wrongType("sum", v, pos);
    total = total.is_number_integer() && v.is_number_integer()
                ? Json(total.get<std::int64_t>() + v.get<std::int64_t>())
                : Json(toDouble(total) + toDouble(v));
  }
  return total;
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
enum class Walk { kFilter, kMap, kAll, kAny, kNone, kOne, kCount, kFind, kFindIndex, kFindLast, kFindLastIndex };

template <Walk W>
Expected<Json> walk(Evaluator& e, const Node& call) {
  if (call.kids.size() != 2) {
    return errorAt(call.text + "() takes an array and a predicate", call.pos);
  }
  auto list = e.eval(*call.kids[0]);
  if (!list) return list;
  if (!list->is_array()) {
    return errorAt(call.text + "() cannot take " + typeName(*list) + " " + toText(*list), call.kids[0]->pos);
  }
  const Json& items = *list;
  Json out = Json::array();
  std::int64_t count = 0;
  const bool backwards = W == Walk::kFindLast || W == Walk::kFindLastIndex;
  for (std::size_t k = 0; k < items.size(); ++k) {
    const std::size_t i = backwards ? items.size() - 1 - k : k;
    auto v = e.call(*call.kids[1], items[i]);
    if (!v) return v;
    if (W == Walk::kMap) {
      out.push_back(std::move(*v));
      continue;
    }
    if (!v->is_boolean()) {
      return errorAt(call.text + "()'s predicate gave " + typeName(*v) + ", not a boolean",
                     call.kids[1]->pos);
    }
    const bool yes = v->get<bool>();
    if (W == Walk::kFilter && yes) out.push_back(items[i]);
    if (W == Walk::kAll && !yes) return Json(false);
    if ((W == Walk::kAny && yes) || (W == Walk::kNone && yes)) return Json(W == Walk::kAny);
    if ((W == Walk::kFind || W == Walk::kFindLast) && yes) return items[i];
    if ((W == Walk::kFindIndex || W == Walk::kFindLastIndex) && yes) return Json(i);
    count += yes;
  }
  switch (W) {
    case Walk::kFilter:
    case Walk::kMap: return out;
    case Walk::kAll: return Json(true);
    case Walk::kAny: return Json(false);
    case Walk::kNone: return Json(true);
    case Walk::kOne: return Json(count == 1);
    case Walk::kCount: return Json(count);
    case Walk::kFind:
    case Walk::kFindLast: return Json();
    default: return Json(-1);
  }
}

// get(map or array, key): nil when it is not there.
Expected<Json> getOf(const Args& args, std::size_t pos) {
  PB_ARITY(2, 2, "get");
  const Json& v = args[0];
  if (v.is_object() && args[1].is_string()) {
    auto it = v.find(args[1].get<std::string>());
    return it == v.end() ? Json() : *it;
  }
  if (v.is_array() && args[1].is_number_integer()) {
    std::int64_t i = args[1].get<std::int64_t>();
    if (i < 0) i += static_cast<std::int64_t>(v.size());
    return i >= 0 && i < static_cast<std::int64_t>(v.size()) ? v[static_cast<std::size_t>(i)] : Json();
  }
  return Json();
}

Expected<Json> concatOf(const Args& args, std::size_t pos) {
  Json out = Json::array();
  for (const auto& a : args) {
    if (!a.is_array()) return wrongType("concat", a, pos);
    for (const auto& v : a) out.push_back(v);
  }
  return out;
}

Expected<Json> reverseOf(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "reverse");
  if (!args[0].is_array()) return wrongType("reverse", args[0], pos);
  return Json(Json::array_t(args[0].rbegin(), args[0].rend()));
}

Expected<Json> uniqOf(const Args& args, std::size_t pos) {
  PB_ARITY(1, 1, "uniq");
  if (!args[0].is_array()) return wrongType("uniq", args[0], pos);
  Json out = Json::array();
  for (const auto& v : args[0]) {
    if (std::none_of(out.begin(), out.end(), [&](const Json& o) { return equal(o, v); })) out.push_back(v);
  }
  return out;
}

// sort(array[, "asc" | "desc"]) of numbers or of strings.
Expected<Json> sortOf(const Args& args, std::size_t pos) {
  PB_ARITY(1, 2, "sort");
  if (!args[0].is_array()) return wrongType("sort", args[0], pos);
  Json::array_t items = args[0].get<Json::array_t>();
  const bool numbers = std::all_of(items.begin(), items.end(), [](const Json& v) { return isNumber(v); });
  const bool strings = std::all_of(items.begin(), items.end(), [](const Json& v) { return v.is_string(); });
  if (!numbers && !strings) return errorAt("sort() takes numbers or strings, not a mix", pos);
  const bool desc = args.size() == 2 && args[1] == "desc";
  std::stable_sort(items.begin(), items.end(), [&](const Json& a, const Json& b) {
    const bool less = numbers ? toDouble(a) < toDouble(b) : a.get_ref<const std::string&>() < b.get_ref<const std::string&>();
    const bool more = numbers ? toDouble(b) < toDouble(a) : b.get_ref<const std::string&>() < a.get_ref<const std::string&>();
    return desc ? more : less;
  });
  return Json(std::move(items));
}

// The string functions of two strings: indexOf, hasPrefix, trimPrefix, ...
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
  static const std::map<std::string_view, Function> table = {
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
      {"keys", {keysOf}},
      {"values", {valuesOf}},
      {"first", {firstOf}},
      {"last", {lastOf}},
      {"sum", {sumOf}},
      {"type", {typeOf}},
      {"toBase64", {toBase64}},
      {"fromBase64", {fromBase64}},
      {"get", {getOf}},
      {"concat", {concatOf}},
      {"reverse", {reverseOf}},
      {"uniq", {uniqOf}},
      {"sort", {sortOf}},
      {"indexOf", {stringPair<Pair::kIndexOf>}},
      {"lastIndexOf", {stringPair<Pair::kLastIndexOf>}},
      {"hasPrefix", {stringPair<Pair::kHasPrefix>}},
      {"hasSuffix", {stringPair<Pair::kHasSuffix>}},
      {"trimPrefix", {stringPair<Pair::kTrimPrefix>}},
      {"trimSuffix", {stringPair<Pair::kTrimSuffix>}},
      {"repeat", {repeatOf}},
      {"filter", {nullptr, walk<Walk::kFilter>, 1}},
      {"map", {nullptr, walk<Walk::kMap>, 1}},
      {"all", {nullptr, walk<Walk::kAll>, 1}},
      {"any", {nullptr, walk<Walk::kAny>, 1}},
      {"none", {nullptr, walk<Walk::kNone>, 1}},
      {"one", {nullptr, walk<Walk::kOne>, 1}},
      {"count", {nullptr, walk<Walk::kCount>, 1}},
      {"find", {nullptr, walk<Walk::kFind>, 1}},
      {"findIndex", {nullptr, walk<Walk::kFindIndex>, 1}},
      {"findLast", {nullptr, walk<Walk::kFindLast>, 1}},
      {"findLastIndex", {nullptr, walk<Walk::kFindLastIndex>, 1}},
  };
  return table;
}

}  // namespace

const Function* findFunction(std::string_view name) {
  if (name.rfind("sprig.", 0) == 0) return findSprigFunction(name.substr(6));
  auto it = functions().find(name);
  return it == functions().end() ? nullptr : &it->second;
}

}  // namespace plugboard::core::expression

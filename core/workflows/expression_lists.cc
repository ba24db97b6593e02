// The kExpr functions of arrays and maps: expr-lang's builtins over collections, the ones
// that take a closure (filter, map, all, ...) among them.
#include <algorithm>
#include <map>

#include "core/workflows/expression_tree.h"

namespace plugboard::core::expression {

// expression_functions.cc
Status checkArity(const std::vector<Json>& args, std::size_t min, std::size_t max, const char* name,
                  std::size_t pos);
Error wrongType(const char* name, const Json& v, std::size_t pos);

namespace {

using Args = std::vector<Json>;

#define PB_ARITY(min, max, name) \
  if (Status st = checkArity(args, min, max, name, pos); !st) return st.error()

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

#undef PB_ARITY

}  // namespace

void addListFunctions(std::map<std::string_view, Function>& table) {
  table.insert({
      {"keys", {keysOf}},
      {"values", {valuesOf}},
      {"first", {firstOf}},
      {"last", {lastOf}},
      {"sum", {sumOf}},
      {"get", {getOf}},
      {"concat", {concatOf}},
      {"reverse", {reverseOf}},
      {"uniq", {uniqOf}},
      {"sort", {sortOf}},
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
  });
}

}  // namespace plugboard::core::expression

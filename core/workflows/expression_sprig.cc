// sprig.* in `{{=...}}` tags: the functions of Sprig's GenericFuncMap that Argo gives every
// expression (util/expr/env/env.go), with Sprig's argument order (the subject last:
// sprig.trimPrefix("v", s)) and its lenient conversions (a string that is not a number is
// 0 to sprig.int). Not every Sprig function is here; an absent one is an unknown function.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>

#include <re2/re2.h>

#include "core/base/text.h"
#include "core/workflows/expression_tree.h"

namespace plugboard::core::expression {

// expression_encodings.cc
std::string base64Encode(const std::string& in);
Expected<std::string> base64Decode(const std::string& in, std::size_t pos);
std::string goFormat(std::string_view layout, std::time_t t);

namespace {

using Args = std::vector<Json>;

// Sprig's (spf13/cast's) int64 of anything; 0 when it has none.
std::int64_t asInt64(const Json& v) {
  if (v.is_number_integer()) return v.is_number_unsigned() ? static_cast<std::int64_t>(v.get<std::uint64_t>()) : v.get<std::int64_t>();
  if (v.is_number_float()) return static_cast<std::int64_t>(v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (!v.is_string()) return 0;
  std::string s = v.get<std::string>();
  if (auto dot = s.find('.'); dot != std::string::npos && s.find_first_not_of('0', dot + 1) == std::string::npos) {
    s.resize(dot);  // "3.0" is 3; "3.5" is not a number to cast
  }
  int base = 10;
  std::size_t start = s.size() > 0 && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (s.compare(start, 2, "0x") == 0) {
    base = 16;
    s.erase(start, 2);
  }
  std::int64_t out = 0;
  const char* b = s.data() + (start && s[0] == '+' ? 1 : 0);
  auto r = std::from_chars(b, s.data() + s.size(), out, base);
  return r.ec == std::errc{} && r.ptr == s.data() + s.size() ? out : 0;
}

double asFloat64(const Json& v) {
  if (v.is_number()) return toDouble(v);
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (!v.is_string()) return 0;
  const auto& s = v.get_ref<const std::string&>();
  double d = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), d);
  return r.ec == std::errc{} && r.ptr == s.data() + s.size() ? d : 0;
}

bool isEmpty(const Json& v) {
  if (v.is_null()) return true;
  if (v.is_boolean()) return !v.get<bool>();
  if (v.is_number()) return toDouble(v) == 0;
  if (v.is_string()) return v.get_ref<const std::string&>().empty();
  if (v.is_array() || v.is_object()) return v.empty();
  return false;
}

Status sprigArity(const Args& args, std::size_t min, std::size_t max, std::string_view name, std::size_t pos) {
  if (args.size() >= min && args.size() <= max) return Status::Ok();
  return errorAt("sprig." + std::string(name) + "() takes " +
                     (min == max ? std::to_string(min) : std::to_string(min) + " or more") +
                     " arguments, not " + std::to_string(args.size()),
                 pos);
}

// A function of the string in its last argument and integers or strings before it.
using StringFn = std::string (*)(const Args& args, std::string s);

template <std::size_t N, StringFn F>
Expected<Json> onString(const Args& args, std::size_t pos) {
  if (args.size() != N) return errorAt("sprig function takes " + std::to_string(N) + " arguments, not " + std::to_string(args.size()), pos);
  return Json(F(args, toText(args.back())));
}

std::string upperS(const Args&, std::string s) { return toUpperUnicode(s); }
std::string lowerS(const Args&, std::string s) { return toLowerUnicode(s); }
std::string titleS(const Args&, std::string s) {
  bool start = true;
  for (char& c : s) {
    if (start) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    start = std::isspace(static_cast<unsigned char>(c));
  }
  return s;
}
std::string trimCut(std::string s, std::string_view cut) {
  auto b = s.find_first_not_of(cut);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(cut) - b + 1);
}
std::string trimS(const Args&, std::string s) { return trimCut(std::move(s), " \t\n\r\v\f"); }
std::string trimAllS(const Args& a, std::string s) { return trimCut(std::move(s), toText(a[0])); }
std::string trimPrefixS(const Args& a, std::string s) {
  const std::string p = toText(a[0]);
  return s.rfind(p, 0) == 0 ? s.substr(p.size()) : s;
}
std::string trimSuffixS(const Args& a, std::string s) {
  const std::string p = toText(a[0]);
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0 ? s.substr(0, s.size() - p.size()) : s;
}
std::string nospaceS(const Args&, std::string s) {
  s.erase(std::remove_if(s.begin(), s.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }), s.end());
  return s;
}
std::string truncS(const Args& a, std::string s) {
  const std::int64_t n = asInt64(a[0]);
  const auto size = static_cast<std::int64_t>(s.size());
  if (n < 0) return n > -size ? s.substr(static_cast<std::size_t>(size + n)) : s;
  return n < size ? s.substr(0, static_cast<std::size_t>(n)) : s;
}
std::string replaceS(const Args& a, std::string s) {
  const std::string from = toText(a[0]), to = toText(a[1]);
  if (from.empty()) return s;
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}
std::string quoteS(const Args&, std::string s) { return Json(s).dump(); }
std::string squoteS(const Args&, std::string s) { return "'" + s + "'"; }
std::string b64encS(const Args&, std::string s) { return base64Encode(s); }
std::string toStringS(const Args&, std::string s) { return s; }

constexpr std::size_t kMadeLimit = 1u << 20;  // what repeat and indent may make

Expected<Json> repeatF(const Args& args, std::size_t pos) {
  if (Status st = sprigArity(args, 2, 2, "repeat", pos); !st) return st.error();
  const std::int64_t n = std::max<std::int64_t>(asInt64(args[0]), 0);
  const std::string s = toText(args[1]);
  if (static_cast<std::uint64_t>(n) * s.size() > kMadeLimit) return errorAt("sprig.repeat() would make more than 1 MiB", pos);
  std::string out;
  for (std::int64_t i = 0; i < n; ++i) out += s;
  return Json(out);
}

Expected<Json> indentWith(const Args& args, std::size_t pos, bool newline) {
  if (Status st = sprigArity(args, 2, 2, newline ? "nindent" : "indent", pos); !st) return st.error();
  const auto width = static_cast<std::size_t>(std::max<std::int64_t>(asInt64(args[0]), 0));
  const std::string s = toText(args[1]);
  const auto lines = static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')) + 1;
  if (width > kMadeLimit || lines * width + s.size() > kMadeLimit) {
    return errorAt("sprig.indent() would make more than 1 MiB", pos);
  }
  const std::string pad(width, ' ');
  std::string out = newline ? "\n" + pad : pad;
  for (char c : s) {
    out += c;
    if (c == '\n') out += pad;
  }
  return Json(out);
}
Expected<Json> indentF(const Args& a, std::size_t p) { return indentWith(a, p, false); }
Expected<Json> nindentF(const Args& a, std::size_t p) { return indentWith(a, p, true); }

Expected<Json> testString(const Args& args, std::size_t pos, std::string_view name) {
  if (Status st = sprigArity(args, 2, 2, name, pos); !st) return st.error();
  const std::string needle = toText(args[0]), s = toText(args[1]);
  if (name == "contains") return Json(s.find(needle) != std::string::npos);
  if (name == "hasPrefix") return Json(s.rfind(needle, 0) == 0);
  return Json(s.size() >= needle.size() && s.compare(s.size() - needle.size(), needle.size(), needle) == 0);
}
Expected<Json> containsF(const Args& a, std::size_t p) { return testString(a, p, "contains"); }
Expected<Json> hasPrefixF(const Args& a, std::size_t p) { return testString(a, p, "hasPrefix"); }
Expected<Json> hasSuffixF(const Args& a, std::size_t p) { return testString(a, p, "hasSuffix"); }

Expected<Json> b64decF(const Args& args, std::size_t pos) {
  if (Status st = sprigArity(args, 1, 1, "b64dec", pos); !st) return st.error();
  auto s = base64Decode(toText(args[0]), pos);
  if (!s) return s.error();
  return Json(std::move(*s));
}

template <char Op>
Expected<Json> integerFold(const Args& args, std::size_t pos) {
  if (args.empty()) return errorAt("sprig arithmetic of nothing", pos);
  std::int64_t acc = asInt64(args[0]);
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::int64_t v = asInt64(args[i]);
    if (Op == '+') acc += v;
    if (Op == '-') acc -= v;
    if (Op == '*') acc *= v;
    if (Op == '/' || Op == '%') {
      if (v == 0) return errorAt("integer divide by zero", pos);
      acc = Op == '/' ? acc / v : acc % v;
    }
    if (Op == '>') acc = std::max(acc, v);
    if (Op == '<') acc = std::min(acc, v);
  }
  return Json(acc);
}

template <char Op>
Expected<Json> floatFold(const Args& args, std::size_t pos) {
  if (args.empty()) return errorAt("sprig arithmetic of nothing", pos);
  double acc = asFloat64(args[0]);
  for (std::size_t i = 1; i < args.size(); ++i) {
    const double v = asFloat64(args[i]);
    if (Op == '+') acc += v;
    if (Op == '-') acc -= v;
    if (Op == '*') acc *= v;
    if (Op == '/') acc /= v;
    if (Op == '>') acc = std::max(acc, v);
    if (Op == '<') acc = std::min(acc, v);
  }
  return Json(acc);
}

Expected<Json> add1F(const Args& args, std::size_t pos) {
  if (Status st = sprigArity(args, 1, 1, "add1", pos); !st) return st.error();
  return Json(asInt64(args[0]) + 1);
}
Expected<Json> intF(const Args& args, std::size_t pos) {
  if (Status st = sprigArity(args, 1, 1, "int", pos); !st) return st.error();
  return Json(asInt64(args[0]));
}
Expected<Json> floatF(const Args& args, std::size_t pos) {
  if (Status st = sprigArity(args, 1, 1, "float64", pos); !st) return st.error();
  return Json(asFloat64(args[0]));
}
Expected<Json> defaultF(const Args& args, std::size_t pos) {
  if (Status st = sprigArity(args, 1, 2, "default", pos); !st) return st.error();
  return args.size() < 2 || isEmpty(args[1]) ? args[0] : args[1];
}
Expected<Json> emptyF(const Args& args, std::size_t pos) {
  if (Status st = sprigArity(args, 1, 1, "empty", pos); !st) return st.error();
  return Json(isEmpty(args[0]));
}
Expected<Json> coalesceF(const Args& args, std::size_t) {
  for (const auto& v : args) {
    if (!isEmpty(v)) return v;
  }
  return Json();
}
Expected<Json> ternaryF(const Args& args, std::size_t pos) {
  if (Status st = sprigArity(args, 3, 3, "ternary", pos); !st) return st.error();
  return args[2].is_boolean() && args[2].get<bool>() ? args[0] : args[1];
}
Expected<Json> listF(const Args& args, std::size_t) { return Json(args); }
Expected<Json> dictF(const Args& args, std::size_t) {
  Json out = Json::object();
  for (std::size_t i = 0; i < args.size(); i += 2) out[toText(args[i])] = i + 1 < args.size() ? args[i + 1] : Json("");
  return out;
}
Expected<Json> catF(const Args& args, std::size_t) {
  std::string out;
  for (const auto& v : args) {
    if (v.is_null()) continue;
    out += (out.empty() ? "" : " ") + toText(v);
  }
  return Json(out);
}
Expected<Json> joinF(const Args& args, std::size_t pos) {
  if (Status st = sprigArity(args, 2, 2, "join", pos); !st) return st.error();
  const std::string sep = toText(args[0]);
  if (!args[1].is_array()) return Json(toText(args[1]));
  std::string out;
  for (std::size_t i = 0; i < args[1].size(); ++i) out += (i ? sep : "") + toText(args[1][i]);
  return Json(out);
}
Expected<Json> splitListF(const Args& args, std::size_t pos) {
  if (Status st = sprigArity(args, 2, 2, "splitList", pos); !st) return st.error();
  const std::string sep = toText(args[0]), s = toText(args[1]);
  Json out = Json::array();
  std::size_t start = 0;
  for (auto at = sep.empty() ? std::string::npos : s.find(sep); at != std::string::npos; at = s.find(sep, start)) {
    out.push_back(s.substr(start, at - start));
    start = at + sep.size();
  }
  out.push_back(s.substr(start));
  return out;
}
Expected<Json> toJsonF(const Args& args, std::size_t pos) {
  if (Status st = sprigArity(args, 1, 1, "toJson", pos); !st) return st.error();
  return Json(toJsonText(args[0]));
}
Expected<Json> fromJsonF(const Args& args, std::size_t pos) {
  if (Status st = sprigArity(args, 1, 1, "fromJson", pos); !st) return st.error();
  Json v = Json::parse(toText(args[0]), nullptr, false);
  return v.is_discarded() ? Json::object() : v;  // Sprig: an empty map for bad JSON
}
Expected<Json> regexF(const Args& args, std::size_t pos, std::string_view name) {
  if (Status st = sprigArity(args, name == "regexReplaceAll" ? 3 : 2, name == "regexReplaceAll" ? 3 : 2, name, pos); !st) return st.error();
  RE2 re(toText(args[0]), RE2::Quiet);
  if (!re.ok()) return errorAt("bad regular expression '" + toText(args[0]) + "': " + re.error(), pos);
  std::string s = toText(args[1]);
  if (name == "regexMatch") return Json(RE2::PartialMatch(s, re));
  if (name == "regexFind") {
    re2::StringPiece found;
    return Json(RE2::PartialMatch(s, "(" + toText(args[0]) + ")", &found) ? std::string(found) : "");
  }
  // Go's $1 / ${1} in the replacement is RE2's \1.
  std::string with;
  const std::string repl = toText(args[2]);
  for (std::size_t i = 0; i < repl.size(); ++i) {
    if (repl[i] == '\\') {
      with += "\\\\";
    } else if (repl[i] == '$' && i + 1 < repl.size() && (std::isdigit(static_cast<unsigned char>(repl[i + 1])) || repl[i + 1] == '{')) {
      const bool braced = repl[i + 1] == '{';
      std::size_t j = i + 1 + braced;
      std::string digits;
      while (j < repl.size() && std::isdigit(static_cast<unsigned char>(repl[j]))) digits += repl[j++];
      if (braced && (j >= repl.size() || repl[j] != '}')) {
        with += repl[i];
        continue;
      }
      with += "\\" + digits;
      i = j - !braced;
    } else {
      with += repl[i];
    }
  }
  RE2::GlobalReplace(&s, re, with);
  return Json(s);
}
Expected<Json> regexMatchF(const Args& a, std::size_t p) { return regexF(a, p, "regexMatch"); }
Expected<Json> regexFindF(const Args& a, std::size_t p) { return regexF(a, p, "regexFind"); }
Expected<Json> regexReplaceAllF(const Args& a, std::size_t p) { return regexF(a, p, "regexReplaceAll"); }

Expected<Json> listPart(const Args& args, std::size_t pos, std::string_view name) {
  if (Status st = sprigArity(args, 1, 1, name, pos); !st) return st.error();
  if (!args[0].is_array()) return errorAt("sprig." + std::string(name) + "() takes a list, not " + typeName(args[0]), pos);
  const Json& l = args[0];
  if (name == "first") return l.empty() ? Json() : l.front();
  if (name == "last") return l.empty() ? Json() : l.back();
  if (name == "rest") return l.empty() ? l : Json(Json::array_t(l.begin() + 1, l.end()));
  if (name == "initial") return l.empty() ? l : Json(Json::array_t(l.begin(), l.end() - 1));
  if (name == "reverse") return Json(Json::array_t(l.rbegin(), l.rend()));
  Json out = Json::array();  // uniq
  for (const auto& v : l) {
    if (std::none_of(out.begin(), out.end(), [&](const Json& o) { return equal(o, v); })) out.push_back(v);
  }
  return out;
}
Expected<Json> firstF(const Args& a, std::size_t p) { return listPart(a, p, "first"); }
Expected<Json> lastF(const Args& a, std::size_t p) { return listPart(a, p, "last"); }
Expected<Json> restF(const Args& a, std::size_t p) { return listPart(a, p, "rest"); }
Expected<Json> initialF(const Args& a, std::size_t p) { return listPart(a, p, "initial"); }
Expected<Json> reverseF(const Args& a, std::size_t p) { return listPart(a, p, "reverse"); }
Expected<Json> uniqF(const Args& a, std::size_t p) { return listPart(a, p, "uniq"); }
Expected<Json> hasF(const Args& args, std::size_t pos) {
  if (Status st = sprigArity(args, 2, 2, "has", pos); !st) return st.error();
  if (!args[1].is_array()) return Json(false);
  return Json(std::any_of(args[1].begin(), args[1].end(), [&](const Json& v) { return equal(v, args[0]); }));
}
Expected<Json> sortAlphaF(const Args& args, std::size_t pos) {
  if (Status st = sprigArity(args, 1, 1, "sortAlpha", pos); !st) return st.error();
  std::vector<std::string> items;
  if (args[0].is_array()) {
    for (const auto& v : args[0]) items.push_back(toText(v));
  } else {
    items.push_back(toText(args[0]));
  }
  std::sort(items.begin(), items.end());
  return Json(items);
}

// sprig.date(layout, time): a time as Unix seconds or, beyond Sprig, RFC 3339 text (what
// Argo's workflow.creationTimestamp is); anything else is now, as Sprig takes it.
Expected<Json> dateF(const Args& args, std::size_t pos) {
  if (Status st = sprigArity(args, 2, 2, "date", pos); !st) return st.error();
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  if (args[1].is_number()) {
    t = static_cast<std::time_t>(asInt64(args[1]));
  } else if (args[1].is_string()) {
    std::tm tm{};
    const std::string s = args[1].get<std::string>();
    if (const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) {
      t = timegm(&tm);
      if (*end == '+' || *end == '-') {  // the zone's offset: +hh:mm
        int h = 0, m = 0;
        if (std::sscanf(end + 1, "%d:%d", &h, &m) == 2) t -= (*end == '+' ? 1 : -1) * (h * 3600 + m * 60);
      }
    }
  }
  return Json(goFormat(toText(args[0]), t));
}

const std::map<std::string_view, Function>& sprig() {
  static const std::map<std::string_view, Function> table = {
      {"upper", {onString<1, upperS>}}, {"lower", {onString<1, lowerS>}}, {"title", {onString<1, titleS>}},
      {"trim", {onString<1, trimS>}}, {"trimAll", {onString<2, trimAllS>}},
      {"trimPrefix", {onString<2, trimPrefixS>}}, {"trimSuffix", {onString<2, trimSuffixS>}},
      {"nospace", {onString<1, nospaceS>}}, {"trunc", {onString<2, truncS>}},
      {"repeat", {repeatF}}, {"replace", {onString<3, replaceS>}},
      {"quote", {onString<1, quoteS>}}, {"squote", {onString<1, squoteS>}},
      {"b64enc", {onString<1, b64encS>}}, {"b64dec", {b64decF}},
      {"indent", {indentF}}, {"nindent", {nindentF}},
      {"toString", {onString<1, toStringS>}},
      {"contains", {containsF}}, {"hasPrefix", {hasPrefixF}}, {"hasSuffix", {hasSuffixF}},
      {"add", {integerFold<'+'>}}, {"sub", {integerFold<'-'>}}, {"mul", {integerFold<'*'>}},
      {"div", {integerFold<'/'>}}, {"mod", {integerFold<'%'>}}, {"max", {integerFold<'>'>}},
      {"min", {integerFold<'<'>}}, {"add1", {add1F}},
      {"addf", {floatFold<'+'>}}, {"subf", {floatFold<'-'>}}, {"mulf", {floatFold<'*'>}},
      {"divf", {floatFold<'/'>}}, {"maxf", {floatFold<'>'>}}, {"minf", {floatFold<'<'>}},
      {"int", {intF}}, {"int64", {intF}}, {"atoi", {intF}}, {"float64", {floatF}},
      {"default", {defaultF}}, {"empty", {emptyF}}, {"coalesce", {coalesceF}},
      {"ternary", {ternaryF}}, {"list", {listF}}, {"dict", {dictF}}, {"cat", {catF}},
      {"join", {joinF}}, {"splitList", {splitListF}}, {"toJson", {toJsonF}},
      {"toRawJson", {toJsonF}}, {"fromJson", {fromJsonF}},
      {"regexMatch", {regexMatchF}}, {"regexFind", {regexFindF}},
      {"regexReplaceAll", {regexReplaceAllF}},
      {"first", {firstF}}, {"last", {lastF}}, {"rest", {restF}}, {"initial", {initialF}},
      {"reverse", {reverseF}}, {"uniq", {uniqF}}, {"has", {hasF}}, {"sortAlpha", {sortAlphaF}},
      {"date", {dateF}},
  };
  return table;
}

}  // namespace

const Function* findSprigFunction(std::string_view name) {
  auto it = sprig().find(name);
  return it == sprig().end() ? nullptr : &it->second;
}

}  // namespace plugboard::core::expression

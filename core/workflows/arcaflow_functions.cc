// The Arcaflow engine's built-in functions (internal/builtinfunctions/functions.go), for
// core/workflows/arcaflow_expression.h. Each does what the Go function it wraps does
// (strconv, math, strings, os), written here for C++: Go's number syntax and formats are
// reproduced where C's differ (ParseInt, ParseFloat, FormatFloat).
#include <locale.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>

#include "core/base/read_file.h"
#include "core/base/text.h"
#include "core/workflows/arcaflow_functions.h"

namespace plugboard::core::arcaflow {
namespace detail {

std::string typeName(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "bool";
    case Json::value_t::string: return "string";
    case Json::value_t::number_float: return "float";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer";
    case Json::value_t::array: return "list";
    case Json::value_t::object: return "object";
    default: return "value";
  }
}

std::size_t valueBytes(const Json& v, std::size_t stop) {
  std::size_t bytes = 0;
  std::vector<const Json*> todo{&v};  // no recursion: a value may be nested deeply
  while (!todo.empty() && bytes <= stop) {
    const Json* j = todo.back();
    todo.pop_back();
    bytes += 16;
    if (j->is_string()) {
      bytes += j->get_ref<const std::string&>().size();
    } else if (j->is_array()) {
      for (const auto& item : *j) todo.push_back(&item);
    } else if (j->is_object()) {
      for (const auto& [key, member] : j->items()) {
        bytes += key.size();
        todo.push_back(&member);
      }
    }
  }
  return bytes;
}

Error tooLarge(const std::string& what) {
  return Error(what + " would make a value of more than 16 MiB (" + std::to_string(kMaxValueBytes) +
               " bytes, each item counted 16 more), the most a value an expression makes may hold");
}

std::optional<std::int64_t> asInt(const Json& v) {
  if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<std::int64_t>();
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return static_cast<std::int64_t>(u);
    }
  }
  return std::nullopt;
}

namespace {

// ---------------------------------------------------------------------------------------
// strconv.FormatFloat

// The decimal digits of |v| (no trailing zeros; none for zero) and where the point goes:
// v = 0.d1d2d3... x 10^dp. `significant` < 0: the fewest that read back as v.
struct Digits {
  std::string d;
  int dp = 0;
};

Digits decimalDigits(double v, int significant) {
  Digits out;
  if (v == 0) return out;
  char buf[64];
  auto r = significant < 0
               ? std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific)
               : std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific,
                               significant - 1);
  const std::string_view s(buf, static_cast<std::size_t>(r.ptr - buf));
  const auto e = s.find('e');
  for (char c : s.substr(0, e)) {
    if (c != '.') out.d += c;
  }
  while (!out.d.empty() && out.d.back() == '0') out.d.pop_back();
  out.dp = std::atoi(std::string(s.substr(e + 1)).c_str()) + 1;
  return out;
}

std::string exponentText(int exp, int min_digits) {
  std::string out(1, exp < 0 ? '-' : '+');
  std::string digits = std::to_string(exp < 0 ? -exp : exp);
  while (static_cast<int>(digits.size()) < min_digits) digits.insert(digits.begin(), '0');
  return out + digits;
}

// Go's fmtE and fmtF over Digits.
std::string formatE(const Digits& g, int prec, char e) {
  std::string out(1, g.d.empty() ? '0' : g.d[0]);
  if (prec > 0) {
    out += '.';
    for (int i = 1; i <= prec; ++i) out += i < static_cast<int>(g.d.size()) ? g.d[i] : '0';
  }
  const int exp = g.d.empty() ? 0 : g.dp - 1;
  return out + e + exponentText(exp, 2);
}

std::string formatF(const Digits& g, int prec) {
  std::string out;
  const int nd = static_cast<int>(g.d.size());
  if (g.dp > 0) {
    for (int i = 0; i < g.dp; ++i) out += i < nd ? g.d[i] : '0';
  } else {
    out = "0";
  }
  if (prec > 0) {
    out += '.';
    for (int i = 1; i <= prec; ++i) {
      const int j = g.dp + i - 1;
      out += (j >= 0 && j < nd) ? g.d[j] : '0';
    }
  }
  return out;
}

std::string formatG(double v, int prec, char e) {
  const bool shortest = prec < 0;
  if (!shortest && prec == 0) prec = 1;
  const Digits g = decimalDigits(v, shortest ? -1 : prec);
  const int nd = static_cast<int>(g.d.size());
  if (shortest) prec = nd;
  int eprec = prec;
  if (eprec > nd && nd >= g.dp) eprec = nd;
  if (shortest) eprec = 6;
  const int exp = g.dp - 1;
  if (exp < -4 || exp >= eprec) {
    if (prec > nd) prec = nd;
    return formatE(g, prec - 1, e);
  }
  if (prec > g.dp) prec = nd;
  return formatF(g, std::max(prec - g.dp, 0));
}

// A finite double's significand (the implicit 1 set for a normal number) and its biased
// exponent (1 for a subnormal), as 'b' and 'x' read them.
struct Decomposed {
  std::uint64_t mant;
  int exp;
};
Decomposed decompose(double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  std::uint64_t mant = bits & ((std::uint64_t{1} << 52) - 1);
  int exp = static_cast<int>((bits >> 52) & 0x7FF);
  if (exp == 0) {
    exp = 1;
  } else {
    mant |= std::uint64_t{1} << 52;
  }
  return {mant, exp};
}

// 'b': the mantissa in decimal, 'p', the binary exponent.
std::string formatB(double v) {
  auto [mant, exp] = decompose(v);
  exp += -1023 - 52;
  return std::to_string(mant) + "p" + (exp >= 0 ? "+" : "") + std::to_string(exp);
}

// 'x' / 'X': 0x1.hhhp±dd, the mantissa rounded (half to even) to `prec` hex digits.
std::string formatX(double v, int prec, char fmt) {
  auto [mant, exp] = decompose(v);
  exp -= 1023;
  if (mant == 0) exp = 0;
  constexpr std::uint64_t kOne = std::uint64_t{1} << 60;
  mant <<= 8;  // the leading 1 to bit 60
  while (mant != 0 && (mant & kOne) == 0) {
    mant <<= 1;
    --exp;
  }
  if (prec >= 0 && prec < 15) {
    const unsigned shift = static_cast<unsigned>(prec * 4);
    const std::uint64_t extra = (mant << shift) & (kOne - 1);
    mant >>= 60 - shift;
    if ((extra | (mant & 1)) > (kOne >> 1)) ++mant;
    mant <<= 60 - shift;
    if (mant & (kOne << 1)) {
      mant >>= 1;
      ++exp;
    }
  }
  const char* hex = fmt == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string out = "0";
  out += fmt;
  out += static_cast<char>('0' + ((mant >> 60) & 1));
  mant <<= 4;
  if (prec < 0 && mant != 0) {
    out += '.';
    while (mant != 0) {
      out += hex[(mant >> 60) & 15];
      mant <<= 4;
    }
  } else if (prec > 0) {
    out += '.';
    for (int i = 0; i < prec; ++i) {
      out += hex[(mant >> 60) & 15];
      mant <<= 4;
    }
  }
  out += fmt == 'X' ? 'P' : 'p';
  return out + exponentText(exp, 2);
}

}  // namespace

std::string formatFloat(double v, char format, int precision) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  const std::string sign = std::signbit(v) ? "-" : "";
  const double a = std::fabs(v);
  switch (format) {
    case 'b': return std::string(std::signbit(v) ? "-" : "") + formatB(a);
    case 'x':
    case 'X': return sign + formatX(a, precision, format);
    case 'g':
    case 'G': return sign + formatG(a, precision, format == 'G' ? 'E' : 'e');
    case 'e':
    case 'E':
    case 'f': {
      std::string buf(static_cast<std::size_t>(std::max(precision, 0)) + 400, '\0');
      const auto kind = format == 'f' ? std::chars_format::fixed : std::chars_format::scientific;
      auto r = precision < 0 ? std::to_chars(buf.data(), buf.data() + buf.size(), a, kind)
                             : std::to_chars(buf.data(), buf.data() + buf.size(), a, kind, precision);
      buf.resize(static_cast<std::size_t>(r.ptr - buf.data()));
      if (format == 'E') std::replace(buf.begin(), buf.end(), 'e', 'E');
      return sign + buf;
    }
    default: return "%" + std::string(1, format);  // what Go writes for an unknown format
  }
}

namespace {

// ---------------------------------------------------------------------------------------
// Arguments

using Args = std::vector<Json>;

Error badArgument(const char* function, std::size_t index, const char* want, const Json& got) {
  std::string hint;
  const std::string type = typeName(got);
  if (std::string_view(want) == "a float" && type == "integer") hint = " (convert it with intToFloat)";
  if (std::string_view(want) == "an integer" && type == "float") hint = " (convert it with floatToInt)";
  return Error(std::string(function) + ": argument " + std::to_string(index + 1) + " must be " +
               want + ", got " + (type == "integer" ? "an " : "a ") + type + hint);
}

Expected<std::int64_t> intArg(const char* f, const Args& a, std::size_t i) {
  if (auto v = asInt(a[i])) return *v;
  return badArgument(f, i, "an integer", a[i]);
}
Expected<double> floatArg(const char* f, const Args& a, std::size_t i) {
  if (a[i].is_number_float()) return a[i].get<double>();
  return badArgument(f, i, "a float", a[i]);
}
Expected<std::string> stringArg(const char* f, const Args& a, std::size_t i) {
  if (a[i].is_string()) return a[i].get<std::string>();
  return badArgument(f, i, "a string", a[i]);
}

std::string jsonQuoted(const std::string& s) { return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace); }

// strconv.ParseInt(s, 10, 64): an optional sign and decimal digits, nothing else.
Expected<std::int64_t> parseInt(const std::string& s) {
  const char* f = "stringToInt";
  std::size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  if (i == s.size() || !std::all_of(s.begin() + static_cast<std::ptrdiff_t>(i), s.end(),
                                    [](char c) { return c >= '0' && c <= '9'; })) {
    return Error(std::string(f) + ": " + jsonQuoted(s) + " is not a base-10 integer");
  }
  std::uint64_t u = 0;
  const std::uint64_t limit = s[0] == '-' ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
  for (; i < s.size(); ++i) {
    const auto d = static_cast<std::uint64_t>(s[i] - '0');
    if (u > (limit - d) / 10) return Error(std::string(f) + ": " + jsonQuoted(s) + " is out of the 64-bit range");
    u = u * 10 + d;
  }
  return s[0] == '-' ? static_cast<std::int64_t>(std::uint64_t{0} - u) : static_cast<std::int64_t>(u);
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == y;
         });
}

// strconv.ParseFloat(s, 64): Go's decimal and hexadecimal float syntax (underscores only
// after a 0x prefix, between digits), "inf"/"infinity" with an optional sign, "nan".
Expected<double> parseFloat(const std::string& s) {
  const std::string f = "stringToFloat: ";
  auto syntax = [&] { return Error(f + jsonQuoted(s) + " is not a number"); };
  std::size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  const bool negative = i == 1 && s[0] == '-';
  const std::string_view rest = std::string_view(s).substr(i);
  if (equalsIgnoreCase(rest, "inf") || equalsIgnoreCase(rest, "infinity")) {
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  if (i == 0 && equalsIgnoreCase(rest, "nan")) return std::numeric_limits<double>::quiet_NaN();
  std::string clean(s.substr(0, i));
  const bool hex = rest.size() > 1 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X');
  auto isDigitOf = [hex](char c) {
    return (c >= '0' && c <= '9') || (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
  };
  std::size_t j = hex ? 2 : 0;
  if (hex) clean += "0x";
  std::size_t mantissa_digits = 0;
  bool point = false;
  char previous = hex ? 'x' : '\0';  // for the underscore rule: after a digit or the prefix
  for (; j < rest.size(); ++j) {
    const char c = rest[j];
    if (isDigitOf(c)) {
      ++mantissa_digits;
    } else if (c == '.' && !point) {
      point = true;
    } else if (c == '_' && hex && (isDigitOf(previous) || previous == 'x') && j + 1 < rest.size() &&
               isDigitOf(rest[j + 1])) {
      previous = c;
      continue;
    } else {
      break;
    }
    clean += c;
    previous = c;
  }
  if (mantissa_digits == 0) return syntax();
  if (j < rest.size()) {
    const char e = static_cast<char>(std::tolower(static_cast<unsigned char>(rest[j])));
    if (e != (hex ? 'p' : 'e')) return syntax();
    clean += e;
    ++j;
    if (j < rest.size() && (rest[j] == '+' || rest[j] == '-')) clean += rest[j++];
    const std::size_t from = j;
    for (; j < rest.size() && rest[j] >= '0' && rest[j] <= '9'; ++j) clean += rest[j];
    if (j == from || j != rest.size()) return syntax();
  } else if (hex) {
    return syntax();  // a hexadecimal float needs its p exponent
  }
  static const locale_t c_locale = newlocale(LC_NUMERIC_MASK, "C", static_cast<locale_t>(nullptr));
  const double v = strtod_l(clean.c_str(), nullptr, c_locale);
  if (std::isinf(v)) return Error(f + jsonQuoted(s) + " is out of the range of a 64-bit float");
  return v;
}

// strings.Split: `separator` empty splits into UTF-8 sequences (a byte that starts none is
// a piece of its own).
Json split(const std::string& s, const std::string& separator) {
  Json out = Json::array();
  if (separator.empty()) {
    for (std::size_t i = 0; i < s.size();) {
      const auto c = static_cast<unsigned char>(s[i]);
      std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
      if (i + n > s.size()) n = 1;
      for (std::size_t k = 1; k < n; ++k) {
        if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) n = 1;
      }
      out.push_back(s.substr(i, n));
      i += n;
    }
    return out;
  }
  std::size_t from = 0;
  for (;;) {
    const auto at = s.find(separator, from);
    if (at == std::string::npos) break;
    out.push_back(s.substr(from, at - from));
    from = at + separator.size();
  }
  out.push_back(s.substr(from));
  return out;
}

// ---------------------------------------------------------------------------------------
// The functions

#define PB_TRY(var, expr)          \
  auto var##_got = (expr);         \
  if (!var##_got) return var##_got.error(); \
  auto var = std::move(*var##_got)

Expected<Json> intToFloat(const Args& a, const Context&) {
  PB_TRY(x, intArg("intToFloat", a, 0));
  return Json(static_cast<double>(x));
}

Expected<Json> floatToInt(const Args& a, const Context&) {
  PB_TRY(x, floatArg("floatToInt", a, 0));
  if (std::isnan(x)) return Error("floatToInt: attempted to convert a NaN float to an integer");
  if (std::isinf(x)) {
    return Json(x > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min());
  }
  // Go's int64(x) on amd64, where the engine runs: out of range gives the smallest integer.
  if (!(x > -9223372036854775808.0 - 1.0 && x < 9223372036854775808.0)) {
    return Json(std::numeric_limits<std::int64_t>::min());
  }
  return Json(static_cast<std::int64_t>(x));
}

Expected<Json> intToString(const Args& a, const Context&) {
  PB_TRY(x, intArg("intToString", a, 0));
  return Json(std::to_string(x));
}

Expected<Json> floatToString(const Args& a, const Context&) {
  PB_TRY(x, floatArg("floatToString", a, 0));
  return Json(formatFloat(x, 'f', -1));
}

Expected<Json> floatToFormattedString(const Args& a, const Context&) {
  const char* f = "floatToFormattedString";
  PB_TRY(x, floatArg(f, a, 0));
  PB_TRY(format, stringArg(f, a, 1));
  PB_TRY(precision, intArg(f, a, 2));
  if (format.size() != 1 || std::string_view("beEfgGxX").find(format[0]) == std::string_view::npos) {
    return Error(std::string(f) + ": the format must be one of b, e, E, f, g, G, x, X, got " + jsonQuoted(format));
  }
  if (precision > 10000) {
    return Error(std::string(f) + ": a precision of " + std::to_string(precision) +
                 " digits is more than the 10000 allowed");
  }
  return Json(formatFloat(x, format[0], precision < 0 ? -1 : static_cast<int>(precision)));
}

Expected<Json> boolToString(const Args& a, const Context&) {
  if (!a[0].is_boolean()) return badArgument("boolToString", 0, "a bool", a[0]);
  return Json(a[0].get<bool>() ? "true" : "false");
}

Expected<Json> stringToInt(const Args& a, const Context&) {
  PB_TRY(s, stringArg("stringToInt", a, 0));
  PB_TRY(v, parseInt(s));
  return Json(v);
}

Expected<Json> stringToFloat(const Args& a, const Context&) {
  PB_TRY(s, stringArg("stringToFloat", a, 0));
  PB_TRY(v, parseFloat(s));
  return Json(v);
}

Expected<Json> stringToBool(const Args& a, const Context&) {
  PB_TRY(s, stringArg("stringToBool", a, 0));
  const std::string l = toLowerUnicode(s);
  if (l == "1" || l == "t" || l == "true") return Json(true);
  if (l == "0" || l == "f" || l == "false") return Json(false);
  return Error("stringToBool: " + jsonQuoted(s) + " is not a boolean (true, false, t, f, 1 or 0, in any case)");
}

template <double (*F)(double)>
Expected<Json> math(const char* name, const Args& a) {
  PB_TRY(x, floatArg(name, a, 0));
  return Json(F(x));
}
double roundAway(double x) { return std::round(x); }  // Go's math.Round: half away from zero
double ceilOf(double x) { return std::ceil(x); }
double floorOf(double x) { return std::floor(x); }
double absOf(double x) { return std::fabs(x); }

Expected<Json> toLower(const Args& a, const Context&) {
  PB_TRY(s, stringArg("toLower", a, 0));
  return Json(toLowerUnicode(s));
}

Expected<Json> toUpper(const Args& a, const Context&) {
  PB_TRY(s, stringArg("toUpper", a, 0));
  return Json(toUpperUnicode(s));
}

Expected<Json> splitString(const Args& a, const Context&) {
  PB_TRY(s, stringArg("splitString", a, 0));
  PB_TRY(separator, stringArg("splitString", a, 1));
  // Counted before any piece is made: 4 MB split into 16 M pieces would hold gigabytes.
  std::size_t pieces = separator.empty() ? s.size() : 1;
  for (std::size_t at = 0; !separator.empty() && (at = s.find(separator, at)) != std::string::npos;
       at += separator.size())
    ++pieces;
  if (16 + 16 * pieces + s.size() > kMaxValueBytes) return tooLarge("splitString");
  return split(s, separator);
}

Expected<Json> readFile(const Args& a, const Context& context) {
  PB_TRY(name, stringArg("readFile", a, 0));
  if (name.find('\0') != std::string::npos) return Error("readFile: the file name holds a NUL byte");
  std::filesystem::path file(name);
  if (context.read_anywhere) {
    if (file.is_relative() && !context.files_dir.empty()) file = context.files_dir / file;
    auto text = readTextFile(file.lexically_normal(), "file");
    if (!text) return Error("readFile: " + text.error().message());
    return Json(std::move(*text));
  }
  auto text = readTextFileBeneath(context.files_dir, file, "file");
  if (!text && text.error().code() == Error::Code::kUntrusted) {
    return Error("readFile: " + text.error().message() +
                 " (the context directory; --read-outside-context lets readFile read any file)");
  }
  if (!text) return Error("readFile: " + text.error().message());
  return Json(std::move(*text));
}

Expected<Json> getEnvVar(const Args& a, const Context& context) {
  PB_TRY(name, stringArg("getEnvVar", a, 0));
  PB_TRY(fallback, stringArg("getEnvVar", a, 1));
  std::optional<std::string> value;
  if (context.environment) {
    value = context.environment(name);
  } else if (name.find('\0') == std::string::npos) {
    if (const char* v = std::getenv(name.c_str())) value = v;
  }
  return Json(value ? *value : fallback);
}

Expected<Json> bindConstants(const Args& a, const Context&) {
  if (!a[0].is_array()) return badArgument("bindConstants", 0, "a list", a[0]);
  // Each item gets a copy of the constant: counted before any is made.
  const std::size_t constant = valueBytes(a[1]) + 16 * 3 + 12;  // {"item", "constant"}
  if (constant * a[0].size() > kMaxValueBytes ||
      valueBytes(a[0]) + constant * a[0].size() > kMaxValueBytes)
    return tooLarge("bindConstants");
  Json out = Json::array();
  for (const auto& item : a[0]) out.push_back(Json{{"item", item}, {"constant", a[1]}});
  return out;
}

#undef PB_TRY

const std::map<std::string, Function, std::less<>>& table() {
  static const std::map<std::string, Function, std::less<>> functions = {
      {"intToFloat", {1, intToFloat}},
      {"floatToInt", {1, floatToInt}},
      {"intToString", {1, intToString}},
      {"floatToString", {1, floatToString}},
      {"floatToFormattedString", {3, floatToFormattedString}},
      {"boolToString", {1, boolToString}},
      {"stringToInt", {1, stringToInt}},
      {"stringToFloat", {1, stringToFloat}},
      {"stringToBool", {1, stringToBool}},
      {"ceil", {1, [](const Args& a, const Context&) { return math<ceilOf>("ceil", a); }}},
      {"floor", {1, [](const Args& a, const Context&) { return math<floorOf>("floor", a); }}},
      {"round", {1, [](const Args& a, const Context&) { return math<roundAway>("round", a); }}},
      {"abs", {1, [](const Args& a, const Context&) { return math<absOf>("abs", a); }}},
      {"toLower", {1, toLower}},
      {"toUpper", {1, toUpper}},
      {"splitString", {2, splitString}},
      {"readFile", {1, readFile}},
      {"getEnvVar", {2, getEnvVar}},
      {"bindConstants", {2, bindConstants}},
  };
  return functions;
}

}  // namespace

const Function* findFunction(std::string_view name) {
  const auto& t = table();
  auto it = t.find(name);
  return it == t.end() ? nullptr : &it->second;
}

}  // namespace detail

std::vector<std::string> functionNames() {
  std::vector<std::string> names;
  for (const auto& entry : detail::table()) names.push_back(entry.first);
  return names;  // sorted: the table is a map
}

}  // namespace plugboard::core::arcaflow

#include "core/base/text.h"

#include <locale.h>
#include <wctype.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include <nlohmann/json.hpp>

namespace plugboard::core {

std::string join(const std::vector<std::string>& items, std::string_view separator,
                 std::string_view empty) {
  if (items.empty()) return std::string(empty);
  std::string out = items.front();
  for (std::size_t i = 1; i < items.size(); ++i) {
    out += separator;
    out += items[i];
  }
  return out;
}

namespace {

// One code point of `s` at `i`: its value and length, or U+FFFD and 1 for a byte that
// starts no valid sequence (overlong forms, surrogates and values past U+10FFFF included).
std::pair<char32_t, std::size_t> decodeUtf8(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return {c, 1};
  std::size_t n = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((c & 0xE0) == 0xC0) {
    n = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return {0xFFFD, 1};
  }
  if (i + n > s.size()) return {0xFFFD, 1};
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return {0xFFFD, 1};
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0xFFFD, 1};
  return {cp, n};
}

void appendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string mapCase(std::string_view s, bool upper) {
  const bool ascii = std::all_of(s.begin(), s.end(), [](char c) { return (c & 0x80) == 0; });
  std::string out;
  out.reserve(s.size());
  if (ascii) {
    for (char c : s) {
      if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      out += c;
    }
    return out;
  }
  // glibc's C.UTF-8 holds Unicode's simple case mappings; without it, ASCII only.
  static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  for (std::size_t i = 0; i < s.size();) {
    auto [cp, n] = decodeUtf8(s, i);
    i += n;
    if (utf8) {
      cp = static_cast<char32_t>(upper ? towupper_l(static_cast<wint_t>(cp), utf8)
                                       : towlower_l(static_cast<wint_t>(cp), utf8));
    } else if (cp < 0x80) {
      cp = static_cast<char32_t>(upper ? std::toupper(static_cast<int>(cp)) : std::tolower(static_cast<int>(cp)));
    }
    appendUtf8(out, cp);
  }
  return out;
}

}  // namespace

std::string toLowerUnicode(std::string_view s) { return mapCase(s, false); }
std::string toUpperUnicode(std::string_view s) { return mapCase(s, true); }

std::string toLower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  });
  return out;
}

namespace {

// The optimal-string-alignment form of Damerau-Levenshtein: each swap of two neighbours
// counts once, and no substring is edited twice.
std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// Names longer than this are not compared (the table is their lengths' product).
constexpr std::size_t kLongestCompared = 256;

}  // namespace

std::optional<std::string> nearestName(std::string_view given,
                                       std::span<const std::string> candidates) {
  if (given.empty() || given.size() > kLongestCompared) return std::nullopt;
  const std::string lower = toLower(given);
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const std::string& candidate : candidates) {
    if (candidate == given || candidate.size() > kLongestCompared) continue;
    const std::size_t longer = std::max(given.size(), candidate.size());
    const std::size_t cutoff = std::clamp<std::size_t>(longer / 3, 1, 3);
    const std::size_t distance = editDistance(lower, toLower(candidate));
    if (distance > cutoff || (best && distance >= best_distance)) continue;
    best = candidate;
    best_distance = distance;
  }
  return best;
}

std::string didYouMean(std::string_view given, std::span<const std::string> candidates) {
  const auto nearest = nearestName(given, candidates);
  return nearest ? "; did you mean '" + *nearest + "'?" : "";
}

// Plain ASCII (the usual names, keys and messages) is quoted directly; anything that might
// need escaping goes through the JSON library.
std::string excerpt(std::string_view text, std::size_t limit) {
  std::size_t end = text.size();
  if (end > limit) {
    end = limit;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  }
  std::string out;
  for (const char c : text.substr(0, end)) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7F) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xF];
    } else {
      out += c;
    }
  }
  if (end < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string lineNameRule(std::string_view name) {
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto u = static_cast<unsigned char>(name[i]);
    const auto next = i + 1 < name.size() ? static_cast<unsigned char>(name[i + 1]) : 0;
    const auto third = i + 2 < name.size() ? static_cast<unsigned char>(name[i + 2]) : 0;
    if (u < 0x20 || u == 0x7F || (u == 0xC2 && next >= 0x80 && next <= 0x9F) ||
        (u == 0xE2 && next == 0x80 && (third == 0xA8 || third == 0xA9))) {
      return "must not hold control characters (it would forge or rewrite a line of the run's "
             "output)";
    }
    if (u == '/' || u == '\\') return "must not hold '/' or '\\' (path separators)";
  }
  return "";
}

void appendJsonString(std::string& out, std::string_view s) {
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    return c >= 0x20 && c != '"' && c != '\\' && static_cast<unsigned char>(c) < 0x80;
  });
  if (!plain) {
    out += nlohmann::json(std::string(s))
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  out += '"';
  out += s;
  out += '"';
}

}  // namespace plugboard::core

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

// Plain ASCII (the usual names, keys and messages) is quoted directly; anything that might
// need escaping goes through the JSON library.
void appendJsonString(std::string& out, std::string_view s) {
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    return c >= 0x20 && c != '"' && c != '\\' && static_cast<unsigned char>(c) < 0x80;
  });
  if (!plain) {
    out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  out += '"';
  out += s;
  out += '"';
}

}  // namespace plugboard::core

// Base64 and Go's time layouts, for the functions of both expr-lang and Sprig
// (core/workflows/expression_functions.cc, expression_sprig.cc).
#include <ctime>
#include <string>
#include <utility>

#include "core/workflows/expression_tree.h"

namespace plugboard::core::expression {

constexpr std::string_view kBase64 =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64Encode(const std::string& in) {
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                       (static_cast<unsigned char>(in[i + 1]) << 8) | static_cast<unsigned char>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kBase64[(v >> s) & 63];
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += kBase64[(v >> 18) & 63];
    out += kBase64[(v >> 12) & 63];
    out += i + 1 < in.size() ? kBase64[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

Expected<std::string> base64Decode(const std::string& in, std::size_t pos) {
  std::string out;
  unsigned v = 0;
  int bits = 0;
  std::size_t k = 0;
  for (; k < in.size() && in[k] != '='; ++k) {
    auto at = kBase64.find(in[k]);
    if (at == std::string_view::npos) return errorAt("not base64: " + in, pos);
    v = (v << 6) | static_cast<unsigned>(at);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((v >> bits) & 0xFF);
    }
  }
  for (; k < in.size(); ++k) {
    if (in[k] != '=') return errorAt("not base64: " + in, pos);
  }
  return out;
}

// Go's reference-time layout ("2006-01-02T15:04:05Z07:00") for one UTC time.
std::string goFormat(std::string_view layout, std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  static constexpr const char* kMonths[] = {"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"};
  static constexpr const char* kDays[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
  auto two = [](int v) { return (v < 10 ? "0" : "") + std::to_string(v); };
  const std::pair<std::string_view, std::string> parts[] = {
      {"2006", std::to_string(tm.tm_year + 1900)}, {"January", kMonths[tm.tm_mon]},
      {"Monday", kDays[tm.tm_wday]}, {"Z07:00", "Z"}, {"-07:00", "+00:00"}, {"-0700", "+0000"},
      {"Jan", std::string(kMonths[tm.tm_mon]).substr(0, 3)}, {"Mon", std::string(kDays[tm.tm_wday]).substr(0, 3)},
      {"MST", "UTC"}, {"01", two(tm.tm_mon + 1)}, {"02", two(tm.tm_mday)}, {"06", two(tm.tm_year % 100)},
      {"15", two(tm.tm_hour)}, {"03", two(tm.tm_hour % 12 == 0 ? 12 : tm.tm_hour % 12)},
      {"04", two(tm.tm_min)}, {"05", two(tm.tm_sec)}, {"PM", tm.tm_hour < 12 ? "AM" : "PM"},
      {"pm", tm.tm_hour < 12 ? "am" : "pm"}, {"_2", (tm.tm_mday < 10 ? " " : "") + std::to_string(tm.tm_mday)},
      {"1", std::to_string(tm.tm_mon + 1)}, {"2", std::to_string(tm.tm_mday)},
      {"3", std::to_string(tm.tm_hour % 12 == 0 ? 12 : tm.tm_hour % 12)}, {"4", std::to_string(tm.tm_min)},
      {"5", std::to_string(tm.tm_sec)}};
  std::string out;
  for (std::size_t i = 0; i < layout.size();) {
    bool matched = false;
    for (const auto& [token, value] : parts) {
      if (layout.substr(i, token.size()) == token) {
        out += value;
        i += token.size();
        matched = true;
        break;
      }
    }
    if (!matched) out += layout[i++];
  }
  return out;
}

}  // namespace plugboard::core::expression

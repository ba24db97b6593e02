#include "core/base/text.h"

#include <algorithm>

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

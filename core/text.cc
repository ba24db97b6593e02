#include "core/text.h"

#include <algorithm>

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

}  // namespace plugboard::core

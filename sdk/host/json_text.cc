#include "plugboard/host/json_text.h"

namespace plugboard::host {

bool jsonDeeperThan(std::string_view text, std::size_t limit) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, a quote or a backslash among them
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

std::string tooDeepText(std::size_t limit) {
  return "nested deeper than " + std::to_string(limit) + " levels";
}

Expected<nlohmann::json> parseJsonText(std::string_view text) {
  if (holdsNul(text)) return Error(std::string("it ") + kNulText);
  if (jsonDeeperThan(text)) return Error("it is " + tooDeepText());
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return Error(std::string("invalid JSON: ") + e.what());
  }
}

}  // namespace plugboard::host

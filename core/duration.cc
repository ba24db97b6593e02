#include "core/duration.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace plugboard::core {

Expected<Millis> parseDuration(std::string_view text) {
  auto bad = [&] {
    return Error("invalid duration '" + std::string(text) +
                 "': use a number with ms, s, m or h, e.g. 500ms, 30s, 1m30s");
  };
  if (text.empty()) return bad();
  double total_ms = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t start = i;
    while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
    if (i == start) return bad();
    const std::string number(text.substr(start, i - start));
    char* end = nullptr;
    const double value = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size()) return bad();
    std::size_t unit_start = i;
    while (i < text.size() && text[i] >= 'a' && text[i] <= 'z') ++i;
    const std::string_view unit = text.substr(unit_start, i - unit_start);
    double scale;
    if (unit == "ms") {
      scale = 1;
    } else if (unit == "s" || (unit.empty() && start == 0 && i == text.size())) {
      scale = 1000;
    } else if (unit == "m") {
      scale = 60'000;
    } else if (unit == "h") {
      scale = 3'600'000;
    } else {
      return bad();
    }
    total_ms += value * scale;
  }
  return Millis(static_cast<long long>(std::llround(total_ms)));
}

std::string formatGoDuration(Millis d) {
  long long ms = d.count();
  if (ms == 0) return "0s";
  std::string sign = ms < 0 ? "-" : "";
  ms = std::llabs(ms);
  if (ms < 1000) return sign + std::to_string(ms) + "ms";
  const long long h = ms / 3'600'000, m = ms / 60'000 % 60, s = ms / 1000 % 60, frac = ms % 1000;
  std::string out = sign;
  if (h > 0) out += std::to_string(h) + "h";
  if (h > 0 || m > 0) out += std::to_string(m) + "m";
  out += std::to_string(s);
  if (frac > 0) {
    char buf[8];
    std::snprintf(buf, sizeof buf, ".%03lld", frac);
    std::string f = buf;
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  return out + "s";
}

std::string formatDuration(Millis d) {
  long long ms = d.count();
  if (ms == 0) return "0s";
  std::string out = ms < 0 ? "-" : "";
  ms = std::llabs(ms);
  const long long parts[] = {ms / 3'600'000, ms / 60'000 % 60, ms / 1000 % 60, ms % 1000};
  const char* units[] = {"h", "m", "s", "ms"};
  for (int i = 0; i < 4; ++i) {
    if (parts[i] != 0) out += std::to_string(parts[i]) + units[i];
  }
  return out;
}

std::string formatElapsed(Millis d) {
  const long long ms = d.count();
  char buf[32];
  if (ms < 1000) {
    std::snprintf(buf, sizeof buf, "%lldms", ms);
  } else if (ms < 60'000) {
    std::snprintf(buf, sizeof buf, "%.1fs", ms / 1000.0);
  } else {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", ms / 60'000, ms / 1000 % 60);
  }
  return buf;
}

}  // namespace plugboard::core

#include "core/base/duration.h"

#include <cstdio>

namespace plugboard::core {

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

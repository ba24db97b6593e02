#include "core/duration.h"

#include <cstdio>

namespace plugboard::core {

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

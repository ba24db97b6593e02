// core/duration.h: durations as users write them ("30s", "1m30s", "250ms", "1h") and as
// Argo reads them (Go's time.Duration text, e.g. "1h0m0s", "1.5s", "250ms").
#ifndef PLUGBOARD_CORE_DURATION_H_
#define PLUGBOARD_CORE_DURATION_H_

#include <chrono>
#include <string>
#include <string_view>

#include "core/expected.h"

namespace plugboard::core {

using Millis = std::chrono::milliseconds;

// Parses a sequence of <number><unit> with units ms, s, m, h (e.g. "1m30s", "1.5s").
// A bare number is seconds.
Expected<Millis> parseDuration(std::string_view text);

// Formats as Go's time.Duration.String() does, which Argo's agent parses.
std::string formatGoDuration(Millis d);

// The form users write, shortest first: "5m", "30s", "1m30s", "250ms", "1h"; what
// parseDuration() reads back. For --help texts and messages that state a setting.
std::string formatDuration(Millis d);

// Short human form for progress lines: "850ms", "2.3s", "4m05s".
std::string formatElapsed(Millis d);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_DURATION_H_

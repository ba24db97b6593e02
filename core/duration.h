// core/duration.h: durations as users write them ("30s", "1m30s", "250ms", "1h") and as
// Argo reads them (Go's time.Duration text, e.g. "1h0m0s", "1.5s", "250ms"). Parsing and
// Go's form are the host kit's (plugboard/host/options.h), shared with the deployers; this
// header names them in the core and adds the short form for progress lines. Free
// functions; thread-safe.
#ifndef PLUGBOARD_CORE_DURATION_H_
#define PLUGBOARD_CORE_DURATION_H_

#include <chrono>
#include <string>
#include <string_view>

#include <plugboard/host/options.h>

#include "core/expected.h"

namespace plugboard::core {

using host::Millis;
using host::parseDuration;  // "1m30s", "250ms", a bare number is seconds

// Formats as Go's time.Duration.String() does, which Argo's agent parses.
inline std::string formatGoDuration(Millis d) { return host::formatDuration(d); }

// Short human form for progress lines: "850ms", "2.3s", "4m05s".
std::string formatElapsed(Millis d);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_DURATION_H_

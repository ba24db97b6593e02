// core/base/duration.h: durations as users write them ("30s", "1m30s", "250ms", "1h") and as
// Argo reads them (Go's time.Duration text, e.g. "1h0m0s", "1.5s", "250ms"). Parsing and
// Go's form are the host kit's (plugboard/host/options.h), shared with the deployers; this
// header names them in the core and adds the short form for progress lines. Free
// functions; thread-safe.
#ifndef PLUGBOARD_CORE_BASE_DURATION_H_
#define PLUGBOARD_CORE_BASE_DURATION_H_

#include <chrono>
#include <string>
#include <string_view>

#include <plugboard/host/options.h>

#include "core/base/expected.h"

namespace plugboard::core {

using host::Millis;
using host::durationFromSeconds;  // a bare number of seconds in a file
using host::kMaxDuration;        // 100 years
using host::parseDuration;       // "1m30s", "250ms", a bare number is seconds

using host::formatGoDuration;  // as Go's time.Duration.String(), which Argo's agent parses

// The form users write, shortest first: "5m", "30s", "1m30s", "250ms", "1h"; what
// parseDuration() reads back. For --help texts and messages that state a setting.
std::string formatDuration(Millis d);

// Short human form for progress lines: "850ms", "2.3s", "4m05s".
std::string formatElapsed(Millis d);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_BASE_DURATION_H_

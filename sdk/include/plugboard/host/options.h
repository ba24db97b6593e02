// plugboard/host/options.h: option values as users write them, for the runtime's checks
// and for deployers that read them.
//
// Durations: a sequence of <number><unit> with units ms, s, m, h ("1m30s", "250ms",
// "1.5s"); a bare number is seconds. Sizes: a non-negative number of bytes (a JSON
// integer or a string of digits), or digits with a binary multiple k, m, g or t, in any
// case, optionally followed by b or ib ("256M", "1GiB", "512kb": 1K = 1024 bytes).
// Durations are written as Go writes them. Free functions; thread-safe.
#ifndef PLUGBOARD_HOST_OPTIONS_H_
#define PLUGBOARD_HOST_OPTIONS_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "plugboard/host/expected.h"

namespace plugboard::host {

using Millis = std::chrono::milliseconds;

// The longest duration accepted: 100 years, so that a deadline made from it (a clock's
// time plus the duration, in nanoseconds) cannot overflow.
inline constexpr Millis kMaxDuration = std::chrono::hours(24 * 365 * 100);

// The duration `text` names; the error says what is accepted. At most kMaxDuration.
Expected<Millis> parseDuration(std::string_view text);
// A number of seconds as a duration (files may give one bare); an error for a negative
// number or one beyond kMaxDuration.
Expected<Millis> durationFromSeconds(long long seconds);

// `d` as Go's time.Duration.String() writes it ("1m30s", "250ms", "1.5s"), which Argo
// reads and parseDuration() reads back.
std::string formatGoDuration(Millis d);

// The bytes the size `text` names; an error for anything else or a size past 2^64 - 1.
Expected<std::uint64_t> parseSize(std::string_view text);
// The same for an option's JSON value: a non-negative integer, or a string as above.
Expected<std::uint64_t> parseSizeValue(const nlohmann::json& value);

}  // namespace plugboard::host

#endif  // PLUGBOARD_HOST_OPTIONS_H_

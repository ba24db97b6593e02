// core/serving/accept_limits.h: how `plugboard serve` accepts connections when descriptors
// or memory run out, and how many it holds at once. Decisions only, no sockets, so that
// tests drive them with a clock of their own.
//
// * raiseDescriptorLimit() raises the soft RLIMIT_NOFILE to the hard limit, once at start.
// * connectionLimit() is the number of connections served at once; those beyond it are
//   answered 503 and closed (core/serving/http_server.cc).
// * AcceptBackoff: after accept() failed for want of descriptors or memory (EMFILE,
//   ENFILE, ENOBUFS, ENOMEM) the server stops accepting for a pause that starts at
//   kFirstPause and doubles up to kLongestPause while the failures go on; the connections
//   meanwhile wait in the kernel's backlog. Any other error that is not one connection's
//   own pauses the same way, so that no error makes the loop spin. An error of one
//   connection (ECONNABORTED, EPROTO, EPERM and the like) is retried at once. The log
//   gets a line when failures start, then at most one line per kLogEvery with the count
//   of failures since the last line, and one when an accept succeeds again after a run of
//   pauses that had a line; so failures that come and go in quick turns (each accept
//   meets the limit again) log two lines per kLogEvery at most.
// * LogEvery counts events that are logged at most once per period (the refused
//   connections, for one).
//
// Thread-safety: raiseDescriptorLimit() and connectionLimit() from any thread; an
// AcceptBackoff or LogEvery from one thread at a time (the accepting loop's).
#ifndef PLUGBOARD_CORE_SERVING_ACCEPT_LIMITS_H_
#define PLUGBOARD_CORE_SERVING_ACCEPT_LIMITS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/base/duration.h"

namespace plugboard::core {

struct DescriptorLimit {
  std::uint64_t before = 0;  // the soft limit found at start
  std::uint64_t soft = 0;    // the soft limit in effect (the hard one unless raising failed)
  std::uint64_t hard = 0;    // RLIM_INFINITY is reported as UINT64_MAX
};

// Raises the soft limit on open descriptors to the hard limit. Children started later
// inherit the raised limit.
DescriptorLimit raiseDescriptorLimit();
// The limit in effect, without changing it.
DescriptorLimit descriptorLimit();

// The connections served at once: `configured`, or when that is 0 half of the soft
// descriptor limit (the other half is left to plugins, their files and children), at
// most defaults::kAutoMaxConnections, and at least 1.
std::size_t connectionLimit(std::size_t configured, const DescriptorLimit& limit);

// Counts events and says when to log them: the first at once, later ones at most once
// per `period`, with the count since the last line.
class LogEvery {
 public:
  using Clock = std::chrono::steady_clock;
  explicit LogEvery(Millis period) : period_(period) {}
  // One more event at `now`: the number to report in a line now (this one included), or
  // nullopt when the line waits.
  std::optional<std::uint64_t> count(Clock::time_point now);
  // Events counted but not yet reported; taking them resets the count.
  std::uint64_t takeUnreported();

 private:
  Millis period_;
  std::optional<Clock::time_point> last_line_;
  std::uint64_t unreported_ = 0;
};

class AcceptBackoff {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr Millis kFirstPause{100};
  static constexpr Millis kLongestPause{1600};
  static constexpr Millis kLogEvery{10'000};

  // Whether a failed accept's errno is the error of one connection, which the next
  // accept does not meet (false for running out of descriptors or memory).
  static bool oneConnections(int error);

  struct Step {
    Millis pause{0};                 // before the next accept
    std::optional<std::string> log;  // a warning to log now
  };
  // After accept() failed with errno `error` (described by `message`) at `now`.
  Step failed(int error, const std::string& message, Clock::time_point now);
  // After accept() succeeded at `now`: a line to log when it had been failing.
  std::optional<std::string> accepted(Clock::time_point now);

 private:
  Millis pause_{0};  // the last pause; 0 when accepting is not paused
  Clock::time_point paused_since_;
  std::uint64_t failures_ = 0;  // since paused_since_
  LogEvery pausing_lines_{kLogEvery};
  bool reported_ = false;  // this run of pauses has had a line
  LogEvery connection_lines_{kLogEvery};
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_SERVING_ACCEPT_LIMITS_H_

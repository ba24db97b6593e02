#include "core/serving/accept_limits.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <utility>

#include "core/base/defaults.h"

namespace plugboard::core {
namespace {

std::uint64_t toCount(rlim_t value) {
  return value == RLIM_INFINITY ? std::numeric_limits<std::uint64_t>::max()
                                : static_cast<std::uint64_t>(value);
}

}  // namespace

DescriptorLimit descriptorLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return {};
  return {toCount(rl.rlim_cur), toCount(rl.rlim_cur), toCount(rl.rlim_max)};
}

DescriptorLimit raiseDescriptorLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return {};
  DescriptorLimit out{toCount(rl.rlim_cur), toCount(rl.rlim_cur), toCount(rl.rlim_max)};
  if (rl.rlim_cur == rl.rlim_max) return out;
  rlimit raised = rl;
  raised.rlim_cur = rl.rlim_max;
  // Linux refuses more than fs.nr_open even when the hard limit is infinite.
  if (setrlimit(RLIMIT_NOFILE, &raised) == 0) out.soft = toCount(raised.rlim_cur);
  return out;
}

std::size_t connectionLimit(std::size_t configured, const DescriptorLimit& limit) {
  if (configured > 0) return configured;
  const std::uint64_t half = limit.soft / 2;
  return static_cast<std::size_t>(
      std::clamp<std::uint64_t>(half, 1, defaults::kAutoMaxConnections));
}

std::optional<std::uint64_t> LogEvery::count(Clock::time_point now) {
  ++unreported_;
  if (last_line_ && now - *last_line_ < period_) return std::nullopt;
  last_line_ = now;
  return takeUnreported();
}

std::uint64_t LogEvery::takeUnreported() { return std::exchange(unreported_, 0); }

bool AcceptBackoff::oneConnections(int error) {
  switch (error) {
    // accept(2): errors of the connection being accepted, and network errors already
    // pending on it, which Linux passes on; the next connection does not meet them.
    case ECONNABORTED:
    case EPROTO:
    case EPERM:  // a firewall rule refused this one
    case ENETDOWN:
    case ENOPROTOOPT:
    case EHOSTDOWN:
    case ENONET:
    case EHOSTUNREACH:
    case EOPNOTSUPP:
    case ENETUNREACH:
    case EAGAIN:
    case EINTR:
      return true;
    default:
      return false;  // EMFILE, ENFILE, ENOBUFS, ENOMEM, and anything unexpected
  }
}

AcceptBackoff::Step AcceptBackoff::failed(int error, const std::string& message,
                                          Clock::time_point now) {
  Step step;
  if (oneConnections(error)) {
    if (auto n = connection_lines_.count(now)) {
      step.log = *n == 1 ? "accept failed: " + message
                         : "accept failed " + std::to_string(*n) +
                               " times since the last report, lately: " + message;
    }
    return step;
  }
  if (pause_ == Millis{0}) {
    paused_since_ = now;
    failures_ = 0;
    pause_ = kFirstPause;
  } else {
    pause_ = std::min(pause_ * 2, kLongestPause);
  }
  ++failures_;
  step.pause = pause_;
  if (auto n = pausing_lines_.count(now)) {
    reported_ = true;
    if (failures_ > 1) {
      step.log = "accept still failing: " + std::to_string(*n) + " times since the last report (" +
                 message + "); paused " +
                 formatElapsed(std::chrono::duration_cast<Millis>(now - paused_since_)) +
                 " in all, " + formatElapsed(pause_) + " at a time";
    } else {
      step.log = "accept failed: " + message + "; not accepting for " + formatElapsed(pause_) +
                 ", longer while it goes on (up to " + formatElapsed(kLongestPause) + ")";
      if (*n > 1) *step.log += "; " + std::to_string(*n - 1) + " more failed since the last report";
    }
  }
  return step;
}

std::optional<std::string> AcceptBackoff::accepted(Clock::time_point now) {
  if (pause_ == Millis{0}) return std::nullopt;
  pause_ = Millis{0};
  // Said only when its start was: failures that come and go quickly (accept works, the
  // next connection meets the limit again) get a line per kLogEvery at most.
  if (!std::exchange(reported_, false)) return std::nullopt;
  return "accepting again after " +
         formatElapsed(std::chrono::duration_cast<Millis>(now - paused_since_)) + " (" +
         std::to_string(failures_) + " failed accepts meanwhile)";
}

}  // namespace plugboard::core

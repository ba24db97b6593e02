// deployers/common/child_limits.cc: the limits that retire a Child (child.h): descriptors
// and threads counted between calls, calls given, and allocation failures it reported.
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

#include "deployers/common/child.h"
#include "deployers/common/usage.h"

namespace plugboard::deployer_common {
namespace {

// Descriptors and threads are counted at most this often (two stat() calls, about 10 µs),
// after results: nothing at rest, a fraction of a percent of a call under load.
constexpr Millis kUsageCheckEvery{10};

}  // namespace

std::string Child::retireCause() const {
  std::lock_guard lock(mu_);
  return retire_cause_;
}

void Child::retireLocked(const std::string& cause, bool warn) {
  if (!retire_cause_.empty() || ended_) return;
  retire_cause_ = cause;
  std::size_t in_flight = 0;
  for (const auto& [id, call] : calls_) in_flight += call.done ? 0 : 1;
  std::string text = who() + " " + cause + ": the next call starts a new child";
  if (in_flight > 0) {
    text += "; " + std::to_string(in_flight) +
            (in_flight == 1 ? " call in flight finishes" : " calls in flight finish") +
            " in this one";
  }
  if (warn) {
    launch_->log.warn(text);
  } else {
    launch_->log.info(text);
  }
}

void Child::checkUsage() {
  const Settings& s = launch_->settings;
  if (!s.restart_at_open_files && !s.restart_at_threads) return;
  const auto now = Clock::now();
  if (now < next_usage_check_) return;
  next_usage_check_ = now + kUsageCheckEvery;
  // This thread reaps the child, so pid_ is still the child's while it reads.
  std::string cause;
  if (s.restart_at_open_files) {
    const auto fds = openDescriptors(pid_);
    if (fds && *fds >= *s.restart_at_open_files) {
      cause = "holds " + std::to_string(*fds) +
              " open descriptors (option 'restart_at_open_files' is " +
              std::to_string(*s.restart_at_open_files) + ")";
    }
  }
  if (cause.empty() && s.restart_at_threads) {
    const auto threads = threadCount(pid_);
    if (threads && *threads >= *s.restart_at_threads) {
      cause = "runs " + std::to_string(*threads) + " threads (option 'restart_at_threads' is " +
              std::to_string(*s.restart_at_threads) + ")";
    }
  }
  if (cause.empty()) return;
  std::lock_guard lock(mu_);
  retireLocked(cause, true);
}

}  // namespace plugboard::deployer_common

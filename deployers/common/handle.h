// deployers/common/handle.h: a plugin served by a child process that is started again
// after it dies, with backoff after repeated failures (docs/deployers.md, "Restart").
// Shared by the process, python and container deployers (library
// plugboard_deployer_common). Thread-safe.
#ifndef PLUGBOARD_DEPLOYERS_COMMON_HANDLE_H_
#define PLUGBOARD_DEPLOYERS_COMMON_HANDLE_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include <plugboard/deployer.hpp>

#include "deployers/common/child.h"
#include "deployers/common/launch.h"

namespace plugboard::deployer_common {

inline constexpr Millis kFirstBackoff{100};
inline constexpr Millis kMaxBackoff{5000};

// ---------------------------------------------------------------------------------------
// The handle: one plugin, restarted after its child dies. Messages name the plugin and
// launch->deployer.

class RestartingHandle : public plugboard::Handle {
 public:
  RestartingHandle(std::shared_ptr<const Launch> launch, std::shared_ptr<Child> child);

  std::string execute(std::uint64_t call_id, std::string_view request) override;
  void cancel(std::uint64_t call_id) override;

 private:
  std::string run(std::uint64_t id, std::string_view request);
  bool cancelAsked(std::uint64_t id);
  // 0 for the first restart after an answered call, then 100 ms, 200 ms, 400 ms ... 5 s.
  static Millis backoff(int failures);
  // The child to run call `id` in, started again if it died. Errors: it cannot be started,
  // or the call was cancelled while waiting for it.
  host::Expected<std::shared_ptr<Child>> running(std::uint64_t id);

  const std::shared_ptr<const Launch> launch_;
  const std::string who_;  // "plugin 'name' (deployer)"
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<Child> child_;
  std::map<std::uint64_t, bool> calls_;  // calls in execute(): id -> cancel asked
  bool restarting_ = false;
  int failures_ = 0;            // restarts since the last answered call
  std::uint64_t attempts_ = 0;  // restarts tried
  std::string last_failure_;    // of the last restart; empty if it worked
};

// Starts the first child of `launch` and returns the plugin as open() does: its manifest
// and a RestartingHandle. Throws std::runtime_error as Child::start does.
plugboard::Deployed startDeployed(std::shared_ptr<const Launch> launch);

}  // namespace plugboard::deployer_common

#endif  // PLUGBOARD_DEPLOYERS_COMMON_HANDLE_H_

// deployers/common/handle.h: a plugin served by a child process that is started again
// after it dies, with backoff after repeated failures (docs/deployers.md, "Restart"), or
// replaced once it crossed a limit (Child::retireCause()): new calls then go to a new
// child while the old one finishes its calls in flight.
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
  // `child` may be null (deferredDeployed()): the first call starts it; `name` then names
  // the plugin in messages.
  RestartingHandle(std::shared_ptr<const Launch> launch, std::shared_ptr<Child> child,
                   const std::string& name = {});

  std::string execute(std::uint64_t call_id, std::string_view request) override;
  void cancel(std::uint64_t call_id) override;

 private:
  struct CallState {
    bool cancel_asked = false;
    std::shared_ptr<Child> child;  // where it was sent, for cancel(); null before
  };

  std::string run(std::uint64_t id, std::string_view request);
  bool cancelAsked(std::uint64_t id);
  // 0 for the first restart after an answered call, then 100 ms, 200 ms, 400 ms ... 5 s.
  static Millis backoff(int failures);
  // The child to run call `id` in, started again if it died or replaced if it retired.
  // Errors: it cannot be started, or the call was cancelled while waiting for it. A retired
  // child whose replacement failed to start keeps serving until the backoff allows a retry.
  host::Expected<std::shared_ptr<Child>> running(std::uint64_t id);

  const std::shared_ptr<const Launch> launch_;
  const std::string who_;  // "plugin 'name' (deployer)"
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<Child> child_;
  std::map<std::uint64_t, CallState> calls_;  // calls in execute()
  bool restarting_ = false;
  std::uint64_t restarted_for_ = 0;  // the call whose cancel stops the restart under way
  plugboard::Cancellation* restart_cancel_ = nullptr;  // while restarting_
  int failures_ = 0;                   // restarts since the last answered call
  Clock::time_point replace_after_{};  // a retired child's failed replacement: when to retry
  std::uint64_t attempts_ = 0;         // restarts tried
  std::string last_failure_;           // of the last restart; empty if it worked
};

// Starts the first child of `launch` and returns the plugin as open() does: its manifest
// and a RestartingHandle. Throws std::runtime_error as Child::start does, also when
// `cancel` stops the start.
plugboard::Deployed startDeployed(std::shared_ptr<const Launch> launch,
                                  const plugboard::Cancellation* cancel = nullptr);

// The plugin with a `manifest` known without starting it (a deployer's cache of what its
// child said before): its handle starts the first child at the first call.
plugboard::Deployed deferredDeployed(std::shared_ptr<const Launch> launch, Json manifest);

}  // namespace plugboard::deployer_common

#endif  // PLUGBOARD_DEPLOYERS_COMMON_HANDLE_H_

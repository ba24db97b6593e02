// tests/support/launch.h: plugins started as the runtime starts them, for in-process tests
// and benchmarks: a launcher (core/launch/launcher.h) with the deployers built in this tree, and
// dispatcher options that open plugins through it.
#ifndef PLUGBOARD_TESTS_SUPPORT_LAUNCH_H_
#define PLUGBOARD_TESTS_SUPPORT_LAUNCH_H_

#include <memory>
#include <string>
#include <unordered_map>

#include "core/routing/dispatcher.h"
#include "core/launch/launcher.h"
#include "core/runtime/runtime.h"
#include "tests/support/paths.h"

namespace plugboard::testing {

// REQUIRES: the deployers of this build exist (tests depend on them).
inline std::shared_ptr<core::Launcher> launcher(core::Config config = {}) {
  if (config.deployer_dirs.empty()) config.deployer_dirs = {deployerDir()};
  auto made = core::makeLauncher(config);
  if (!made) throw std::runtime_error(made.error().message());
  return std::move(*made);
}

inline core::DispatcherOptions openThrough(std::shared_ptr<core::Launcher> through,
                                           std::unordered_map<std::string, int> priority = {}) {
  return core::DispatcherOptions{.priority = std::move(priority), .launcher = std::move(through)};
}

// Dispatcher options for plugins in-process, through the `native` deployer.
inline core::DispatcherOptions inProcess(std::unordered_map<std::string, int> priority = {}) {
  return openThrough(launcher(), std::move(priority));
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_LAUNCH_H_

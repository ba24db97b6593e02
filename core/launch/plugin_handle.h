// core/launch/plugin_handle.h: a plugin the runtime can call, however it runs.
//
// Every plugin, however its deployer module (core/launch/deployer.h) runs it, looks the same to the
// dispatcher and the runner: a manifest, calls with ids, and cancellation.
//
// Thread-safety: callText() may run concurrently unless the manifest says
// "concurrency":"serial" (the caller serialises those); cancel() is safe from any thread.
#ifndef PLUGBOARD_CORE_LAUNCH_PLUGIN_HANDLE_H_
#define PLUGBOARD_CORE_LAUNCH_PLUGIN_HANDLE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "core/launch/outcome.h"
#include "core/manifests/held_file.h"
#include "core/manifests/manifest.h"

namespace plugboard::core {

class PluginHandle {
 public:
  virtual ~PluginHandle() = default;

  virtual const Manifest& manifest() const = 0;
  // Runs one call (the request as JSON text) and blocks until the plugin answers.
  virtual Outcome callText(std::string_view request_json, std::uint64_t call_id) = 0;
  // Asks the call `call_id` to stop soon; it still answers.
  virtual void cancel(std::uint64_t call_id) = 0;

  // The name of the deployer that runs it ("native", "process", ...).
  virtual const std::string& deployer() const = 0;

  // A fresh id for callText() and cancel(): unique in the process, from 1, so that the
  // lines a deployer logs for a call find that call whatever plugin it runs
  // (core/launch/call_log.h).
  static std::uint64_t newCallId() {
    static std::atomic<std::uint64_t> next{0};
    return next.fetch_add(1) + 1;
  }
};

struct LaunchSlot;  // the launcher's record of one start (core/launch/launcher.cc)

// A started plugin, shared by everything that calls it (core/launch/launcher.h).
struct StartedPlugin {
  // Where it was loaded from (see LaunchTarget::copy); released after `handle`.
  std::shared_ptr<const HeldFile> copy;
  // Its launcher slot, when the plugin owns it (serve: the launcher keeps a start only
  // while the plugin lives); released after `handle`.
  std::shared_ptr<LaunchSlot> slot;
  std::unique_ptr<PluginHandle> handle;
  std::mutex serial;  // held around calls when the manifest says "concurrency":"serial"
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_LAUNCH_PLUGIN_HANDLE_H_

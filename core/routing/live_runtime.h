// core/routing/live_runtime.h: the plugins `serve` hosts, kept up to date while it runs.
//
// Without watching, the plugin directories are scanned once. With watching, the plugins
// are loaded from private copies (PluginMirror) and the directories are watched with
// inotify (IN_CLOSE_WRITE, IN_MOVED_TO, IN_DELETE, IN_MOVED_FROM; a directory created
// after the start is picked up too); changes are debounced and applied as a new
// generation: a new catalog and a dispatcher that keeps the plugins that did not change.
//
// The runtime has no thread of its own (core/base/work_pool.h): whoever does its I/O
// waits until watchDescriptor() is readable and then calls takeChanges() (for `serve`,
// its main thread, which waits for signals too: tools/plugboard/cmd_serve.cc). Each batch
// of changes restarts the debounce, a timer on the clock given to start() (the server's,
// so one clock keeps every deadline); when it fires, the descriptor becomes readable and
// the next takeChanges() applies the changes on its caller's thread. Tests give a
// ManualClock and call takeChanges() themselves: no sleeps.
// New calls go to the newest generation; a call in flight holds its generation, so an old
// version finishes its calls and is unloaded when its last caller is done.
//
// Each applied change is logged and kept among the latest defaults::kRecentReloads
// (recentReloads()), with how long applying it took.
//
// Thread-safety: current(), draining(), reloads(), recentReloads() and deployerOf() from
// any thread; takeChanges() and reload() from any thread, one reload at a time.
#ifndef PLUGBOARD_CORE_ROUTING_LIVE_RUNTIME_H_
#define PLUGBOARD_CORE_ROUTING_LIVE_RUNTIME_H_

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/base/clock.h"
#include "core/base/defaults.h"
#include "core/routing/dispatcher.h"
#include "core/base/duration.h"
#include "core/manifests/plugin_mirror.h"
#include "core/manifests/trust.h"

namespace plugboard::core {

// One plugin file's change, applied by a reload.
struct ReloadRecord {
  std::chrono::system_clock::time_point at;  // when it was applied
  std::filesystem::path file;
  std::string plugin;
  std::string old_version;  // empty: a new plugin
  std::string new_version;  // empty: removed
  Millis took{0};           // applying the reload it was part of
};

class LiveRuntime {
 public:
  LiveRuntime(std::vector<std::filesystem::path> dirs, TrustPolicy trust,
              DispatcherOptions options);
  ~LiveRuntime();
  LiveRuntime(const LiveRuntime&) = delete;
  LiveRuntime& operator=(const LiveRuntime&) = delete;

  // Loads the first generation, without watching.
  Status start();
  // Loads the first generation from private copies and starts watching: changes are
  // applied `debounce` after the last of a batch, timed on `clock`. Errors: the runtime
  // directory or inotify could not be set up. REQUIRES: `clock` outlives the runtime, or
  // stop() is called before it goes.
  Status start(AlarmClock& clock, Millis debounce = defaults::kReloadDebounce);
  // Stops watching (the debounce timer included). Idempotent; the destructor calls it.
  void stop();

  // Readable when the watched directories changed or a debounce came due; -1 without
  // watching. Whoever waits on it calls takeChanges() when it is readable.
  int watchDescriptor() const { return epoll_; }
  // Takes the directories' changes noticed so far (never blocks): any restarts the
  // debounce; when the debounce fired since, with no change after it, applies them
  // (reload(), on this thread). Returns whether it applied them.
  bool takeChanges();

  std::shared_ptr<Dispatcher> current() const;
  // Labels (name@version) of plugins of older generations that still run calls.
  std::vector<std::string> draining() const;
  int reloads() const { return reloads_.load(); }
  // The plugin directories it serves and watches, as given.
  const std::vector<std::filesystem::path>& pluginDirs() const { return dirs_; }
  // The latest changes applied after the start, newest first.
  std::vector<ReloadRecord> recentReloads() const;
  // The deployer that runs `entry` (of `generation`'s catalog), by name; empty when not
  // known. Starts nothing.
  static std::string deployerOf(const Dispatcher& generation, const CatalogEntry& entry) {
    return generation.launcher().deployerOf(entry, generation.sourceOf(entry));
  }
  // Applies the plugin directories' current state now (what the watcher does).
  void reload();
  // Before start(): also watch the directories `dirs` returns (asked again after each
  // change); after each change anywhere, `changed` is asked whether what it keeps changed,
  // and when it did a new generation is made even if no plugin file changed (plugins that
  // failed to load are then tried again). Several calls add up.
  void watchAlso(std::function<std::vector<std::filesystem::path>()> dirs,
                 std::function<bool()> changed);
  // Before start(): `add` appends entries, their sources and problems to each generation's
  // catalog, after the plugin directories' (serve's plugins from the registry,
  // core/launch/registry_plugins.h).
  using ExtraEntries = std::function<void(std::vector<CatalogEntry>&, PluginSources&,
                                          std::vector<CatalogProblem>&)>;
  void addEntriesWith(ExtraEntries add) { extra_ = std::move(add); }

 private:
  void addWatches();
  struct Debounce;  // shared with its timer, which may fire while stop() runs

  std::vector<std::filesystem::path> dirs_;
  std::vector<std::function<std::vector<std::filesystem::path>()>> other_dirs_;
  std::vector<std::function<bool()>> others_changed_;
  ExtraEntries extra_;
  TrustPolicy trust_;
  DispatcherOptions options_;
  std::unique_ptr<PluginMirror> mirror_;
  mutable std::mutex mu_;  // guards current_, old_
  std::shared_ptr<Dispatcher> current_;
  std::vector<std::weak_ptr<Dispatcher>> old_;
  std::atomic<int> reloads_{0};
  mutable std::mutex recent_mu_;     // guards recent_
  std::deque<ReloadRecord> recent_;  // newest first
  AlarmClock* clock_ = nullptr;  // while watching
  Millis debounce_{0};
  std::shared_ptr<Debounce> debounce_state_;
  int inotify_ = -1;
  int due_ = -1;    // eventfd: written when the debounce fires
  int epoll_ = -1;  // inotify_ and due_: watchDescriptor()
  std::mutex reload_mu_;  // one reload at a time
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_ROUTING_LIVE_RUNTIME_H_

// core/routing/dispatcher.h: routes one call to the plugin that should run it.
//
// Named route: the key is looked up among names and aliases (case-insensitive, with and
// without a trailing "-executor-plugin"); only that plugin is called. A named plugin that
// does not provide the RPC fails before it is called; one that declines fails with
// "plugin '<key>' could not execute the template".
// A key that more than one plugin claims and none holds (Catalog::conflictFor) is an Error
// naming their files; it is neither called nor polled for.
// Polling route: when the key names no installed plugin, the providers of the RPC and the
// legacy plugins (Catalog::providers(), Catalog::legacy(): the entries that may be polled,
// with the poll-only ones) are called in order (priority, highest first, then name) until one
// handles the call; an Error stops the poll; if none handles it the result says so and
// lists the plugins tried.
//
// Plugins are loaded on first call and kept for the dispatcher's lifetime; a plugin that
// fails to load is reported on every call, and retried only by a later generation. Lookups cost the
// same whatever the number of installed plugins.
//
// Thread-safety: dispatch() may be called from many threads at once. Calls to a plugin
// whose manifest says "concurrency":"serial" are serialised here.
#ifndef PLUGBOARD_CORE_ROUTING_DISPATCHER_H_
#define PLUGBOARD_CORE_ROUTING_DISPATCHER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/manifests/catalog.h"
#include "core/launch/outcome.h"
#include "core/launch/plugin_handle.h"
#include "core/launch/start_control.h"

namespace plugboard::core {

// Lets another thread cancel the call a dispatch is making (a deadline, Ctrl-C).
class CallControl {
 public:
  // Cancels the plugin call in flight, if any, and makes later calls through this control
  // fail at once. Thread-safe; idempotent.
  void cancel();
  bool cancelled() const;
  // True while a plugin call made through this control is in flight.
  bool calling() const;
  // What cancel() also cancels: the start of the plugin the call needs first (a step
  // whose deployer starts its plugin at its first call: core/launch/launcher.h).
  StartControl& starting() { return starting_; }

 private:
  friend class Dispatcher;
  bool begin(PluginHandle* instance, std::uint64_t call_id);  // false if cancelled
  void end();

  mutable std::mutex mu_;
  bool cancelled_ = false;
  StartControl starting_;
  PluginHandle* instance_ = nullptr;
  std::uint64_t call_id_ = 0;
};

struct DispatchRequest {
  std::string key;      // the plugin as the template names it
  std::string version;  // optional: exact version or prefix
  std::string rpc = "template.execute";
  Json args;                      // the template's args for the plugin
  Json context = Json::object();  // merged into the request (e.g. workflow, template)
  // When set, the same members as the text of a JSON object (e.g. Argo's request body as
  // received), used instead of `context` so that they are not serialised again.
  std::string context_text;
};

enum class Route { kNamed, kPolled };

struct Dispatch {
  Outcome outcome;
  Route route = Route::kNamed;
  std::string plugin;              // name@version of the plugin that answered, if any
  std::vector<std::string> tried;  // plugins polled, in order (empty for a named call)
  bool handled = true;             // false when polling found no plugin to handle it
  bool deadline_passed = false;    // set by a deadline (core/routing/timed_dispatch.h)
};

// Starts the plugin of a catalog entry; the dispatcher calls it once per entry, on the
// entry's first call. The runtime's is Launcher::open() (core/launch/launcher.h); tests may
// give their own.
// Starts the plugin of an entry; `polled`: for a poll, a call for a key that did not name it.
using PluginOpener =
    std::function<Expected<std::shared_ptr<StartedPlugin>>(const CatalogEntry&, bool polled)>;

struct DispatcherOptions {
  // Poll priority by plugin name (case-insensitive); higher goes first; default 0.
  std::unordered_map<std::string, int> priority;
  PluginOpener open;  // REQUIRED
};

class Dispatcher {
 public:
  // REQUIRES: options.open is set.
  Dispatcher(const Catalog& catalog, DispatcherOptions options);
  // A dispatcher that owns its catalog and takes over, from `previous`, the loaded plugins
  // whose entries load the same file: a reload keeps what did not change.
  Dispatcher(std::shared_ptr<const Catalog> catalog, DispatcherOptions options,
             const Dispatcher* previous);
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  Dispatch dispatch(const DispatchRequest& request, CallControl& control);

  // Calls `plugin` directly, named route, as dispatch() calls a plugin it found: the same
  // request text, cancellation through `control`, and its serial lock held around the call
  // when the plugin is serial. For plugins a workflow step started through its own deployer.
  static Outcome callStarted(StartedPlugin& plugin, const DispatchRequest& request,
                             CallControl& control);

  // The plugin a key names, or nullptr when polling applies. REQUIRES: none.
  const CatalogEntry* resolve(const std::string& key, const std::string& version = {}) const;
  // The candidates polling would call for `rpc`, in order.
  std::vector<const CatalogEntry*> pollOrder(const std::string& rpc) const;
  // Whether `entry` has been loaded by this dispatcher.
  bool isLoaded(const CatalogEntry& entry) const;

  struct PluginState {
    bool loaded = false;
    std::chrono::system_clock::time_point loaded_at{};
    std::string load_error;  // set when loading failed
  };
  PluginState state(const CatalogEntry& entry) const;
  // Plugins that failed to load so far.
  int loadFailures() const { return load_failures_.load(); }

  const Catalog& catalog() const { return catalog_; }

 private:
  struct Slot;
  // The entry's slot, its plugin started on first use (for a poll when `polled`).
  Slot& slotFor(const CatalogEntry& entry, bool polled);
  // The index of `entry` (of entries(), then of pollOnly()) in slots_.
  std::size_t slotIndex(const CatalogEntry& entry) const;
  Outcome call(const CatalogEntry& entry, const DispatchRequest& request, Route route,
               CallControl& control);
  static Outcome callOnce(StartedPlugin& plugin, const std::string& body, CallControl& control);

  std::shared_ptr<const Catalog> owned_catalog_;  // set when the dispatcher owns it
  const Catalog& catalog_;
  DispatcherOptions options_;
  mutable std::mutex mu_;                     // guards poll_cache_ and each Slot's instance pointer
  std::vector<std::shared_ptr<Slot>> slots_;  // one per catalog entry, same index; shared
                                              // with the dispatchers of later reloads
  std::atomic<int> load_failures_{0};
  mutable std::unordered_map<std::string, std::vector<const CatalogEntry*>> poll_cache_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_ROUTING_DISPATCHER_H_

// core/routing/dispatcher.h: which plugin runs a call, decided in one place, and the call.
//
// resolve() answers "which plugin runs this call" for every caller (serve's router, the
// runner's steps, `exec`, `call`, `validate`): a name, name@version, alias or legacy
// "<name>-executor-plugin" key, or only an RPC; from the catalog and, for workflow steps
// and `call`, the registry; with the deployer a step chooses. The answer (a Route) is a
// plugin of the catalog, a target the launcher placed (core/launch/launcher.h), a poll
// list, a conflict, or nothing with the reason. call() runs a Route: the only code that
// starts a routed plugin (through the launcher) and calls it.
//
// Named route: the key is looked up among names and aliases (case-insensitive, with and
// without a trailing "-executor-plugin"); only that plugin is called. A named plugin that
// does not provide the RPC fails before it is called; one that declines fails with
// "plugin '<key>' could not execute the template".
// A key that more than one plugin claims and none holds (Catalog::conflictFor) is an Error
// naming their files; it is neither called nor polled for.
// Polling route: when the key names no installed plugin, the providers of the RPC and the
// legacy plugins (with the registry's poll-only ones) whose manifest takes polls
// (takesPolls(), the polled-call rule) are called in order (priority, highest first, then
// name) until one handles the call; an Error stops the poll; if none handles it the result
// says so and lists the plugins tried.
//
// Plugins are loaded on first call and kept for the dispatcher's lifetime; a plugin that
// fails to load is reported on every call, and retried only by a later generation. Lookups cost the
// same whatever the number of installed plugins.
//
// Thread-safety: resolve(), call() and dispatch() may be called from many threads at once.
// Calls to a plugin whose manifest says "concurrency":"serial" are serialised here.
#ifndef PLUGBOARD_CORE_ROUTING_DISPATCHER_H_
#define PLUGBOARD_CORE_ROUTING_DISPATCHER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/manifests/catalog.h"
#include "core/launch/call_log.h"
#include "core/launch/outcome.h"
#include "core/launch/plugin_handle.h"
#include "core/launch/launcher.h"
#include "core/launch/plugin_source.h"
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
  // Where the plugin's log lines written during the calls go (Dispatch::logs has them
  // after the call); its label names the call in the runtime's log ("step hello").
  CallLog& log() { return log_; }

 private:
  friend class Dispatcher;
  bool begin(PluginHandle* instance, std::uint64_t call_id);  // false if cancelled
  void end();

  mutable std::mutex mu_;
  bool cancelled_ = false;
  StartControl starting_;
  CallLog log_;
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

// How a call reached its plugin; the plugin sees it as the request's "via".
enum class Via {
  kNamed,   // the key named it ("name")
  kPolled,  // no plugin has the key; polling called it ("poll")
  kDirect,  // a command called it by name on purpose (`plugboard call`: "direct")
};

struct Dispatch {
  Outcome outcome;
  Via via = Via::kNamed;
  std::string plugin;              // name@version of the plugin that answered, if any
  std::string deployer;            // the deployer that ran it ("native", "process" ...)
  LogLines logs;                   // what the plugins called logged during their calls
  std::vector<std::string> tried;  // plugins polled, in order (empty for a named call)
  bool handled = true;             // false when polling found no plugin to handle it
  bool reached = false;            // a plugin was called (false: refused before any call)
  bool deadline_passed = false;    // set by a deadline (core/routing/timed_dispatch.h)
  // The call was never made: it waited past its start-by time for a thread
  // (core/routing/timed_dispatch.h), or a caller's own bound refused it; `outcome` says why.
  bool not_started = false;
};

// What one call will reach, as resolve() decides it. Holds pointers into the dispatcher's
// catalog: use it only with the dispatcher that made it, while it lives.
struct Route {
  enum class Kind {
    kNone,      // nothing: `reason` says why (a step's deployer cannot run it, ambiguous versions)
    kConflict,  // the key is claimed by several plugins and routes to neither: `reason`
    kPlugin,    // `entry`, a plugin of the catalog (started at its first call, then shared)
    kTarget,    // `target`, placed by the launcher: a step's own deployer, or a plugin only
                // the registry knows; started at the first call, then shared
    kPoll,      // no plugin has the key: `poll`, the plugins a poll for the RPC calls, in order
  };
  Kind kind = Kind::kNone;
  const CatalogEntry* entry = nullptr;
  std::shared_ptr<const LaunchTarget> target;
  const std::vector<const CatalogEntry*>* poll = nullptr;  // the dispatcher's pollOrder()
  std::string reason;

  // The plugin it names (name@version), when one: kPlugin, kTarget.
  std::string plugin() const;
  // The manifest known without starting anything (kPlugin), else nullptr.
  const Manifest* manifest() const { return entry != nullptr ? &entry->manifest : nullptr; }
};

// What resolve() is asked. The views must stay valid during the resolve() call only.
struct RouteQuery {
  std::string_view key;      // a name, alias or legacy "<name>-executor-plugin" key (the
                             // name of name@version); empty: the providers of `rpc` are polled
  std::string_view version;  // exact or a prefix; empty: the highest
  std::string_view rpc = "template.execute";
  std::string_view deployer;  // a workflow step's own deployer (`deploy =`); empty: none
  const Json* options = nullptr;  // that deployer's options; null: none
  // Whether `options` are a workflow's (a step's `deploy =`), which may set only what the
  // deployer's manifest allows a step (core/launch/deployer.h checkDeployerOptions()).
  bool options_from_workflow = false;
  // Whether a name only the registry knows is placed and called by name, and a name
  // whose versions are different plugins refused (workflow steps, `plugboard call`).
  // Templates (serve, exec) reach registry plugins through the catalog instead: serve
  // holds them started, exec polls those whose artifact allows it.
  bool registry = false;
};

// The polled-call rule, the one place it is written: whether a poll for `rpc` may call the
// plugin of `manifest`. Its manifest must not say "polled": false, and it must provide
// `rpc` or be a legacy plugin (no "provides"). A plugin built before "polled" existed is
// polled and may still decline itself (NotHandled): the poll goes on.
bool takesPolls(const Manifest& manifest, std::string_view rpc);

struct DispatcherOptions {
  // Poll priority by plugin name (case-insensitive); higher goes first; default 0.
  std::unordered_map<std::string, int> priority;
  // REQUIRED: starts the catalog's plugins (Launcher::open()) and places named targets.
  std::shared_ptr<Launcher> launcher;
};

// How call() calls. `admit`, when set, sees the manifest of a named plugin (started, for
// a kTarget) before it is called, and may refuse the call with an outcome (a workflow's
// input schema, core/workflows/leaf_calls.h).
struct CallOptions {
  Via via = Via::kNamed;  // kDirect: the plugin sees "direct" and a NotHandled stays one
  std::function<std::optional<Outcome>(const Manifest&)> admit;
};

class Dispatcher {
 public:
  // REQUIRES: options.launcher is set. `sources` says where each entry's plugin comes
  // from (core/launch/plugin_source.h); null, or an entry it does not list: the entry's
  // own file.
  Dispatcher(const Catalog& catalog, DispatcherOptions options,
             std::shared_ptr<const PluginSources> sources = nullptr);
  // A dispatcher that owns its catalog and takes over, from `previous`, the loaded plugins
  // whose entries have the same source: a reload keeps what did not change.
  Dispatcher(std::shared_ptr<const Catalog> catalog, std::shared_ptr<const PluginSources> sources,
             DispatcherOptions options, const Dispatcher* previous);
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // The one answer to "which plugin runs this call". Starts nothing; placing a registry
  // artifact or a step's deployer reads the artifact's file (trust, manifest).
  Route resolve(const RouteQuery& query) const;
  // The one way to call: what `route` reaches, with `request` (its key and rpc as the
  // route was asked). A named plugin that does not provide the RPC fails before it is
  // started; one that declines fails with "plugin '<key>' could not execute the
  // template". A poll calls each candidate that takesPolls() (checked once more on the
  // started manifest of a plugin whose manifest was not known before) until one handles
  // it; an Error stops it. `control` cancels the start and the call.
  Dispatch call(const Route& route, const DispatchRequest& request, CallControl& control,
                const CallOptions& how = {});
  // A template's call: call(resolve({request.key, request.version, request.rpc})).
  Dispatch dispatch(const DispatchRequest& request, CallControl& control);

  // The candidates polling would call for `rpc`, in order (takesPolls() applied); valid
  // while the dispatcher lives.
  const std::vector<const CatalogEntry*>& pollOrder(const std::string& rpc) const;
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
  // Where `entry` (of catalog()) comes from.
  const PluginSource& sourceOf(const CatalogEntry& entry) const;
  Launcher& launcher() const { return *options_.launcher; }

 private:
  struct Slot;
  // The entry's slot, its plugin started on first use (for a poll when `polled`).
  Slot& slotFor(const CatalogEntry& entry, bool polled);
  // The index of `entry` (of entries(), then of pollOnly()) in slots_.
  std::size_t slotIndex(const CatalogEntry& entry) const;
  // A named call of a started plugin: admitted, called, a NotHandled turned Failed.
  Outcome callNamed(StartedPlugin& plugin, const DispatchRequest& request, CallControl& control,
                    const CallOptions& how, Dispatch& d);
  static Outcome callOnce(StartedPlugin& plugin, const std::string& body, CallControl& control);
  // call() without taking the call's log lines.
  Dispatch callRoute(const Route& route, const DispatchRequest& request, CallControl& control,
                     const CallOptions& how);

  std::shared_ptr<const Catalog> owned_catalog_;  // set when the dispatcher owns it
  const Catalog& catalog_;
  std::shared_ptr<const PluginSources> sources_;  // may be null
  DispatcherOptions options_;
  mutable std::mutex mu_;                     // guards poll_cache_ and each Slot's instance pointer
  std::vector<std::shared_ptr<Slot>> slots_;  // one per catalog entry, same index; shared
                                              // with the dispatchers of later reloads
  std::atomic<int> load_failures_{0};
  mutable std::unordered_map<std::string, std::vector<const CatalogEntry*>> poll_cache_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_ROUTING_DISPATCHER_H_

// core/launch/launcher.h: the one place that turns a plugin reference into a running plugin.
//
// A plugin reference is a plugin of the plugin directories (a catalog entry), or a name and
// version that the registry (or the catalog) resolves, with the deployer a workflow step
// may choose (`deploy =`). Every command (run, exec, call, serve, validate), the
// dispatcher, the runner and serve's registry plugins come here, and only here are these
// decided:
//   * versions: the registry's and the plugin directories', one plugin where both have a
//     name@version (the file its `native` artifact, beside the registry's other kinds:
//     Registry::withPluginFile());
//   * placement: the step's own deployer; else the configuration's [deploy] entry for the
//     plugin; else its [deploy] "*" entry, when that deployer has an artifact kind of the
//     plugin; else the first deployer by priority that deploys one of its artifact kinds;
//   * trust: a plugin file is read with the configured trust policy (modes, owners, pins)
//     on its opened descriptor, once, here; a deployer receives artifacts already checked,
//     and the manifest it reports for a plugin file must equal the one in the file;
//   * the cache of started plugins: one start per deployer, artifact content (SHA-256 of
//     its file) and options, shared by every caller.
// place() decides without starting anything (what `validate` needs); start() starts.
//
// Thread-safety: every member may be called from several threads at once.
#ifndef PLUGBOARD_CORE_LAUNCH_LAUNCHER_H_
#define PLUGBOARD_CORE_LAUNCH_LAUNCHER_H_

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/base/expected.h"
#include "core/launch/deployer.h"
#include "core/launch/placement.h"
#include "core/launch/plugin_handle.h"
#include "core/launch/plugin_source.h"
#include "core/launch/registry.h"
#include "core/launch/start_control.h"
#include "core/manifests/catalog.h"

namespace plugboard::core {

// Where a plugin runs: its deployer, the artifact it gets and the options.
struct LaunchTarget {
  const CatalogEntry* deployer = nullptr;
  std::string plugin;  // name@version as resolved
  std::string kind;    // the artifact kind used
  Json artifact;       // as the registry (or the plugin directory) gives it
  Json options = Json::object();
  // The manifest of the plugin's file when it came from a plugin directory, or was read
  // from a native artifact: what the started plugin must report.
  std::shared_ptr<const Manifest> expected;
  // Tells apart starts of the same artifact whose content the caller knows to have changed
  // (serve's registry plugins put the state of the artifact's files here).
  std::string revision;
  // The file a native plugin is loaded from when the launcher holds it (a private copy,
  // core/manifests/plugin_mirror.h, or the checked descriptor): the started plugin holds
  // it too, so that its path names this file alone for as long as the plugin may be
  // loaded from it (/proc/self/fd/N: N is free for another file once closed).
  std::shared_ptr<const HeldFile> copy;
  // "plugin hello@1.0.0 through deployer 'process' (native artifact)"
  std::string describe() const;
};

// A plugin as a workflow step or a command names it.
struct PluginRef {
  std::string name;      // name or alias as written
  std::string version;   // exact or a prefix; empty: the highest
  std::string deployer;  // empty: the configuration's [deploy], then the default order
  Json options = Json::object();
  bool options_from_workflow = false;  // a workflow step's (checkDeployerOptions())
};

struct LaunchOptions {
  TrustPolicy trust;
  // [deploy]: by lower-case plugin name; "*" for every plugin without an entry of its own.
  std::map<std::string, Placement> placement;
  // One-shot commands keep every plugin they started until the launcher is gone; `serve`
  // (false) keeps a started plugin only while a generation holds it, so that an old
  // version ends once its calls are done.
  bool keep_started = true;
  // A server (serve, exec) starts a plugin for a poll, a call for a key that did not name
  // it, only with a deployer that runs it apart from the server's process, unless [deploy]
  // places it in-process on purpose: a poll must not let any installed plugin's code crash
  // the server.
  bool isolate_polls = false;
  ContainmentPolicy containment;
};

class Launcher {
 public:
  Launcher(std::shared_ptr<DeployerSet> deployers, std::shared_ptr<const Registry> registry,
           LaunchOptions options);

  // Ok, or the error for a name written without a version whose versions (in the registry
  // and in `catalog`, which may be null) are different plugins: versions that share no
  // artifact kind, directly or through other versions, such as a bundled hello@1.2.0
  // (native, python, container) and Argo's hello@0.0.1 (argo). The error lists each version
  // with its artifact kinds and asks for NAME@VERSION. With `deployer` (a step's own),
  // only the versions it can run count.
  Status unambiguous(const std::string& name, const std::string& version, const Catalog* catalog,
                     const std::string& deployer = {}) const;
  // Where `ref` runs: resolved against the registry, then `catalog` (may be null).
  // Nothing is started. Errors name the plugin and what is available.
  Expected<LaunchTarget> place(const PluginRef& ref, const Catalog* catalog) const;
  // Where a plugin of the plugin directories runs (its file, or the private copy `source`
  // holds, as a `native` artifact, with the registry's artifacts of the same version).
  Expected<LaunchTarget> place(const CatalogEntry& entry,
                               const PluginSource& source = PluginSource::file()) const;
  // Where a registry entry runs: through `deployer` when not empty (its options checked),
  // else as the configuration's [deploy] says, else by the default order. A native
  // artifact's file is checked against the trust policy and its manifest read.
  Expected<LaunchTarget> place(const RegistryEntry& entry, const std::string& deployer,
                               const Json& options) const;

  // The manifest of `target`'s plugin when its deployer's manifest says "describes": true
  // (its open() answers from a cache of its own and starts the plugin at the first call,
  // so validate may open it): through start(). Nullopt for other deployers; errors as
  // start()'s. When it has to start the plugin (nothing cached), `control` cancels that
  // start and `within` bounds it (a timer on `clock`, StartDeadline): a start cut short is
  // an error and is not kept, so the step that runs the plugin starts it again.
  // REQUIRES: no other start attached to `control` meanwhile; `clock` with `within`.
  Expected<std::optional<Manifest>> describe(const LaunchTarget& target,
                                             StartControl* control = nullptr,
                                             std::optional<Millis> within = std::nullopt,
                                             AlarmClock* clock = nullptr);
  // Starts the plugin of `target`, or returns the one already started for it. Errors
  // name the plugin and its deployer. `control`, when given, cancels the start while it
  // is under way; a cancelled start is not kept: the next caller starts it again.
  Expected<std::shared_ptr<StartedPlugin>> start(const LaunchTarget& target,
                                                 StartControl* control = nullptr);
  // The dispatcher's opener, for an entry of its catalog and where it comes from: a plugin
  // file is placed (place(entry, source)) and started; a started plugin is returned; a
  // registry artifact is placed by the registry and started. `polled`: it is started for
  // a poll (see LaunchOptions::isolate_polls).
  Expected<std::shared_ptr<StartedPlugin>> open(const CatalogEntry& entry,
                                                const PluginSource& source, bool polled = false);

  // A poll-only catalog entry (Catalog::addPollOnly()) for registry plugin `entry`, not
  // started (its source: PluginSource::registry()): its manifest holds only the name and
  // version, and "polled": true; open() places and starts it.
  static CatalogEntry pollEntryFor(const RegistryEntry& entry, std::filesystem::path file);
  // The name of the deployer that runs `entry`: the one it was started through, else where
  // place(entry, source) puts it; empty when it cannot be placed. Starts nothing.
  std::string deployerOf(const CatalogEntry& entry, const PluginSource& source) const;

  DeployerSet& deployers() { return *deployers_; }
  const DeployerSet& deployers() const { return *deployers_; }
  std::shared_ptr<DeployerSet> sharedDeployers() const { return deployers_; }
  const Registry* registry() const { return registry_.get(); }
  const LaunchOptions& options() const { return options_; }

 private:
  using Slot = LaunchSlot;
  // Plugin `entry` of a plugin directory with its artifacts: Registry::withPluginFile().
  RegistryEntry asEntry(const CatalogEntry& entry, const PluginSource& source) const;
  std::shared_ptr<Slot> slotFor(const LaunchTarget& target);
  // Whether start(target) answers without starting anything (started or tried before).
  bool settled(const LaunchTarget& target);
  // place(entry, deployer, options) with the manifest of its native file `known` (already
  // read from a plugin directory, trust checked), or read now when null.
  // With `apart` (a poll in a server, LaunchOptions::isolate_polls), the default order
  // passes over deployers that run plugins in-process. `from_workflow`: `options` are a
  // workflow step's (checkDeployerOptions()).
  Expected<LaunchTarget> placeEntry(const RegistryEntry& entry, const std::string& deployer,
                                    const Json& options, const Manifest* known, bool apart = false,
                                    bool from_workflow = false) const;

  const std::shared_ptr<DeployerSet> deployers_;
  const std::shared_ptr<const Registry> registry_;
  const LaunchOptions options_;
  // The slots' owners: with keep_started, `kept_` (the launcher keeps every start); else
  // each started plugin holds its own slot (StartedPlugin::slot), and a start under way
  // holds it while it runs. The maps only find slots, and forget those nobody owns.
  std::mutex mu_;                                     // guards slots_, by_target_ and kept_
  std::map<std::string, std::weak_ptr<Slot>> slots_;  // by deployer, artifact digest, options
  // By deployer, artifact and options as written: later calls (requeues, retries) find
  // their plugin without hashing the artifact's file again.
  std::map<std::string, std::weak_ptr<Slot>> by_target_;
  std::vector<std::shared_ptr<Slot>> kept_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_LAUNCH_LAUNCHER_H_

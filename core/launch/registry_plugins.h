// core/launch/registry_plugins.h: the plugins `plugboard serve` knows only from the registry.
//
// serve routes templates by manifest (names, aliases, RPCs), and a plugin that runs through
// a deployer other than native has no manifest to read without starting it. So when a
// generation is built, each plugin of the registry that no plugin directory holds (its
// highest version) is started through the launcher (core/launch/launcher.h), which places it. It stays
// started while its artifact is unchanged; when the artifact's file changes, or the registry file,
// the next generation starts it again and the old one ends once the calls it runs are done. A
// plugin that cannot start is a catalog problem that names it and says why; the others
// serve. (docs/serve.md, "Plugins from the registry")
//
// Each entry it adds has a source (core/launch/plugin_source.h) holding its started plugin,
// so the dispatcher's opener, Launcher::open(), finds it. Its manifest says "polled":
// false unless the artifact says `polled = true` (polledByRegistry()).
//
// Thread-safety: changed() and addEntries() are called by the one thread that reloads.
#ifndef PLUGBOARD_CORE_LAUNCH_REGISTRY_PLUGINS_H_
#define PLUGBOARD_CORE_LAUNCH_REGISTRY_PLUGINS_H_

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/manifests/catalog.h"
#include "core/launch/launcher.h"
#include "core/launch/plugin_handle.h"
#include "core/launch/plugin_source.h"
#include "core/launch/registry.h"

namespace plugboard::core {

// Whether polling may call the plugin placed at `target`: the artifact it runs from says
// `polled = true`. The one rule for plugins only the registry knows, in every command.
bool polledByRegistry(const LaunchTarget& target);

// The one-shot commands' (run, exec): a poll-only entry (Launcher::pollEntryFor(); its
// source is PluginSource::registry()) for each registry plugin that `catalog` does not name
// (its highest version) and that polledByRegistry() allows; nothing is started.
std::vector<CatalogEntry> pollOnlyEntries(const Registry& registry, const Launcher& launcher,
                                          const Catalog& catalog);

class RegistryPlugins {
 public:
  // `registry` was loaded from `file`. `launcher` must outlive this object.
  RegistryPlugins(Launcher& launcher, std::filesystem::path file, Registry registry);

  // The directories to watch: the registry file's and those of the artifacts' files.
  std::vector<std::filesystem::path> watchedDirs() const;
  // Whether the registry file or an artifact's file changed since the last addEntries().
  bool changed();
  // Appends an entry (and its source, the started plugin) for each registry plugin that
  // `entries` does not name, starting the new and changed ones, and a problem for each
  // that cannot start.
  void addEntries(std::vector<CatalogEntry>& entries, PluginSources& sources,
                  std::vector<CatalogProblem>& problems);

 private:
  struct Started {
    std::string key;  // deployer, artifact and the state of its files
    std::string deployer;  // the name of the deployer it was started through
    bool polled = false;   // polledByRegistry()
    // The plugin, or why it did not start.
    Expected<std::shared_ptr<StartedPlugin>> plugin = Error("not started");
  };
  std::string registryState() const;
  void reloadRegistry();

  Launcher& launcher_;
  const std::filesystem::path file_;
  Registry registry_;
  std::string registry_state_;               // size and modification time of file_ when read
  std::string registry_error_;               // of the last reading, if it failed
  std::map<std::string, std::string> keys_;  // plugin name -> key at the last addEntries()
  std::map<std::string, Started> started_;   // by plugin name (lower case)
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_LAUNCH_REGISTRY_PLUGINS_H_

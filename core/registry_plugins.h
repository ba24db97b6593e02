// core/registry_plugins.h: the plugins `plugboard serve` knows only from the registry.
//
// serve routes templates by manifest (names, aliases, RPCs), and a plugin that runs through
// a deployer other than native has no manifest to read without starting it. So when a
// generation is built, each plugin of the registry that no plugin directory holds (its
// highest version) is started through its deployer: the one the config's [deploy] names
// for it, else the first by priority with an artifact for it. It stays started while its
// artifact is unchanged; when the artifact's file changes, or the registry file, the next
// generation starts it again and the old one ends once the calls it runs are done. A
// plugin that cannot start is a catalog problem that names it and says why; the others
// serve. (docs/serve.md, "Plugins from the registry")
//
// Thread-safety: changed() and addEntries() are called by the one thread that reloads;
// open() may be called from any thread.
#ifndef PLUGBOARD_CORE_REGISTRY_PLUGINS_H_
#define PLUGBOARD_CORE_REGISTRY_PLUGINS_H_

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog.h"
#include "core/config.h"
#include "core/deployer.h"
#include "core/plugin_handle.h"
#include "core/registry.h"

namespace plugboard::core {

class RegistryPlugins {
 public:
  // `registry` was loaded from `file`. `deployers` must outlive this object.
  RegistryPlugins(DeployerSet& deployers, std::filesystem::path file, Registry registry,
                  std::map<std::string, Config::Deploy> chosen);

  // The directories to watch: the registry file's and those of the artifacts' files.
  std::vector<std::filesystem::path> watchedDirs() const;
  // Whether the registry file or an artifact's file changed since the last addEntries().
  bool changed();
  // Appends an entry for each registry plugin that `entries` does not name, starting the
  // new and changed ones, and a problem for each that cannot start.
  void addEntries(std::vector<CatalogEntry>& entries, std::vector<CatalogProblem>& problems);
  // A handle on the started plugin of an entry added here; nullopt for other entries.
  std::optional<std::unique_ptr<PluginHandle>> open(const CatalogEntry& entry) const;

 private:
  struct Started {
    std::string key;  // deployer, artifact and the state of its files
    std::shared_ptr<PluginHandle> handle;
    std::string error;  // why it did not start (then handle is null)
  };
  std::string registryState() const;
  void reloadRegistry();

  DeployerSet& deployers_;
  const std::filesystem::path file_;
  Registry registry_;
  std::string registry_state_;  // size and modification time of file_ when read
  std::string registry_error_;  // of the last reading, if it failed
  const std::map<std::string, Config::Deploy> chosen_;
  std::map<std::string, std::string> keys_;  // plugin name -> key at the last addEntries()
  mutable std::mutex mu_;                    // guards started_
  std::map<std::string, Started> started_;   // by plugin name (lower case)
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_REGISTRY_PLUGINS_H_

// core/launch/registry.h: which artifact implements a plugin, per kind of deployer.
//
// A registry file (TOML, documented in docs/registry.md) maps `name@version` to artifacts
// for the deployer kinds that can run them:
//   [plugins.sysbench."1.2.0"]
//   native    = "sysbench.so"
//   python    = { module = "sysbench_plugin", path = "python/" }
//   container = { image = "localhost/sysbench:1.2.0" }
// A string artifact is a path (relative to the registry file); a table is passed to the
// deployer as it is. resolve() takes an exact version or a prefix ("1", "1.2") and picks
// the highest match; plugins found only in plugin directories act as `native` entries.
// Value type; thread-safe for concurrent const use.
#ifndef PLUGBOARD_CORE_LAUNCH_REGISTRY_H_
#define PLUGBOARD_CORE_LAUNCH_REGISTRY_H_

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/manifests/catalog.h"
#include "core/base/expected.h"
#include "core/manifests/trust.h"
#include "core/manifests/version.h"

namespace plugboard::core {

using Json = nlohmann::json;

struct RegistryEntry {
  std::string name;
  Version version;
  std::map<std::string, Json> artifacts;  // deployer kind -> artifact ({"path": ...} or a table)
};

class Registry {
 public:
  // Reads `file` after checking it, and the directories above it, against `trust`: the
  // registry says which files become code.
  static Expected<Registry> load(const std::filesystem::path& file, const TrustPolicy& trust);
  static Expected<Registry> parse(std::string_view text, const std::filesystem::path& file);

  // The entry for `name` (case-insensitive) at `version` (exact, a prefix, or empty for
  // the highest) among the registry's entries and the plugins of `catalog` (may be null):
  // the highest match of either, with the artifacts of both when both have that version
  // (withPluginFile()). Errors name what is available.
  Expected<RegistryEntry> resolve(const std::string& name, const std::string& version,
                                  const Catalog* catalog = nullptr) const;
  // Plugin `plugin` of a plugin directory as one entry: `file` (where it is loaded from:
  // its file, or the private copy serve holds) as its `native` artifact, with the
  // registry's artifacts of every other kind for the same name and version. The one rule
  // that merges the two sources; a registry `native` artifact of that version gives way.
  RegistryEntry withPluginFile(const CatalogEntry& plugin, const std::filesystem::path& file) const;

  const std::vector<RegistryEntry>& entries() const { return entries_; }
  // Adds entries that come from elsewhere than a registry file (a workflow's own executor
  // plugins); an entry of the same name and version as one of the file's comes after it.
  void add(std::vector<RegistryEntry> entries);

 private:
  void sortEntries();
  std::vector<RegistryEntry> entries_;  // sorted by name, then version descending
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_LAUNCH_REGISTRY_H_

// core/manifests/catalog.h: what plugins are installed, known without loading any of them.
//
// A Catalog scans plugin directories (not recursively) for `*.so` files, reads each
// file's manifest from its ELF section, validates it and indexes the plugins by name,
// alias and provided RPC. Files that cannot be used are kept as problems, each naming the
// file and the reason; they never stop the scan. Two files with the same name and version
// are both refused. Lookups cost the same whatever the number of plugins.
//
// Thread-safety: a built Catalog is immutable; concurrent const calls are safe.
#ifndef PLUGBOARD_CORE_MANIFESTS_CATALOG_H_
#define PLUGBOARD_CORE_MANIFESTS_CATALOG_H_

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/base/expected.h"
#include "core/manifests/manifest.h"
#include "core/base/text.h"
#include "core/manifests/trust.h"

namespace plugboard::core {

struct CatalogEntry {
  Manifest manifest;
  std::filesystem::path file;  // the plugin file as installed
  std::string label;           // "name@version", for messages
  // What to load when it is not `file` itself: a private copy (see PluginMirror), kept
  // alive by `keep` while any catalog holds this entry.
  std::filesystem::path load_path;
  std::shared_ptr<const void> keep;

  const std::filesystem::path& loadPath() const { return load_path.empty() ? file : load_path; }
};

struct CatalogProblem {
  std::filesystem::path file;
  std::string message;
  std::string oneLine() const { return file.string() + ": refused: " + message; }
};

// The candidate plugin files of `dirs` (files directly in them named *.so or *.so.*, not
// hidden), sorted. A directory that is refused by `policy` or cannot be read becomes a
// problem instead.
std::vector<std::filesystem::path> listPluginFiles(const std::vector<std::filesystem::path>& dirs,
                                                   const TrustPolicy& policy,
                                                   std::vector<CatalogProblem>& problems);

// Reads and validates the manifest of one file without loading it, after checking it
// against `policy` (on the opened descriptor). A module of another `kind` ("executor"
// for plugins, "deployer" for deployer modules) is refused, saying where it belongs.
Expected<CatalogEntry> readPluginFile(const std::filesystem::path& file,
                                      const TrustPolicy& policy = {},
                                      std::string_view kind = "executor");

class Catalog {
 public:
  // Scans every directory in `dirs`. A directory that cannot be read, or that `policy`
  // refuses, is a problem too, and none of its files is used.
  static Catalog scan(const std::vector<std::filesystem::path>& dirs,
                      const TrustPolicy& policy = {}, std::string_view kind = "executor");
  // A catalog of entries already read (by PluginMirror), indexed the same way.
  static Catalog fromEntries(std::vector<CatalogEntry> entries, std::vector<CatalogProblem> problems);

  // Every usable plugin, sorted by name, then by version from highest to lowest.
  const std::vector<CatalogEntry>& entries() const { return entries_; }
  // Every refused file or directory, sorted by path.
  const std::vector<CatalogProblem>& problems() const { return problems_; }

  // Named lookup, case-insensitive, over names, then aliases (a plugin named
  // "<x>-executor-plugin" has the implicit alias "<x>"), then the key with a trailing
  // "-executor-plugin" removed. `version` empty: the highest version; otherwise an exact
  // version or a prefix such as "1" or "1.2" (the highest match). nullptr if none.
  const CatalogEntry* find(std::string_view key, std::string_view version = {}) const;

  // The highest version of every plugin that lists `rpc` in `provides`, sorted by name.
  std::vector<const CatalogEntry*> providers(std::string_view rpc) const;
  // The highest version of every legacy plugin (no `provides`), sorted by name.
  std::vector<const CatalogEntry*> legacy() const;

 private:
  void buildIndex();
  const std::vector<std::size_t>* versionsOf(const std::string& lowered) const;

  std::vector<CatalogEntry> entries_;
  std::vector<CatalogProblem> problems_;
  // lower-cased name -> indexes into entries_, highest version first
  std::unordered_map<std::string, std::vector<std::size_t>> by_name_;
  // lower-cased alias -> lower-cased name
  std::unordered_map<std::string, std::string> by_alias_;
  // rpc -> indexes of the highest version of each provider, sorted by name
  std::unordered_map<std::string, std::vector<std::size_t>> by_rpc_;
  std::vector<std::size_t> legacy_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_MANIFESTS_CATALOG_H_

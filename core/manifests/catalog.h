// core/manifests/catalog.h: what plugins are installed, known without loading any of them.
//
// A Catalog scans plugin directories (not recursively) for `*.so` files, reads each
// file's manifest from its ELF section, validates it and indexes the plugins by name,
// alias and provided RPC. Files that cannot be used are kept as problems, each naming the
// file and the reason; they never stop the scan. Which file may use a name and version,
// and which plugin a name or alias reaches when two claim it, is decided in one place,
// core/manifests/claims.h: without an incumbent (every command but `serve`'s reloads) two
// files with the same name and version are both refused and a key two plugins claim
// routes to neither; with one, what served before keeps serving. Lookups cost the same
// whatever the number of plugins.
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

// Argo names a plugin's key "<name>-executor-plugin": such a key reaches the plugin <name>
// (as an alias in the claims, and when the catalog looks a key up).
inline constexpr std::string_view kLegacyKeySuffix = "-executor-plugin";

// One plugin as the catalog knows it: its manifest and where it is installed. Where its
// plugin is loaded or started from (a private copy, a plugin already started, a registry
// artifact) is the launch layer's (core/launch/plugin_source.h), not the catalog's.
struct CatalogEntry {
  Manifest manifest;
  std::filesystem::path file;  // the plugin file as installed (or the registry artifact's)
  std::string label;           // "name@version", for messages
};

struct CatalogProblem {
  std::filesystem::path file;
  std::string message;
  bool from_registry = false;  // a registry plugin that cannot start, not a plugin file
  std::string oneLine() const { return file.string() + ": refused: " + message; }
  bool operator==(const CatalogProblem&) const = default;
};

// A key (a name or alias, lower-cased) that more than one plugin claims. The plugins stay
// in the catalog; only the key's route is decided: `holder` keeps it, or, when empty, the
// key routes to neither.
struct CatalogConflict {
  std::string key;
  std::vector<std::filesystem::path> files;  // every claimant's file; the holder's first
  std::string holder;                        // lower-cased plugin name; empty: neither
  std::string message;                       // names the key, the plugins and their files
  std::string oneLine() const { return "conflict: " + message; }
  Json toJson() const;  // {"key", "files", "holder" (null: neither), "message"}
  bool operator==(const CatalogConflict&) const = default;
};

// The candidate plugin files of `dirs` (files directly in them named *.so or *.so.*, not
// hidden), sorted. A directory that is refused by `policy` or cannot be read becomes a
// problem instead.
std::vector<std::filesystem::path> listPluginFiles(const std::vector<std::filesystem::path>& dirs,
                                                   const TrustPolicy& policy,
                                                   std::vector<CatalogProblem>& problems);

// Reads and validates the manifest of one file without loading it, after opening it with
// host::openTrusted() (the file, every directory above it and every link on the way are
// checked against `policy`). A module of another `kind` ("executor" for plugins,
// "deployer" for deployer modules) is refused, saying where it belongs.
Expected<CatalogEntry> readPluginFile(const std::filesystem::path& file,
                                      const TrustPolicy& policy = {},
                                      std::string_view kind = "executor");
// The same for a file already opened as `fd` (named `file` in messages): its mode, owner,
// manifest and pin, read from the descriptor.
Expected<CatalogEntry> readPluginManifest(int fd, const std::filesystem::path& file,
                                          const TrustPolicy& policy = {},
                                          std::string_view kind = "executor");

class Catalog {
 public:
  // Scans every directory in `dirs`. A directory that cannot be read, or that `policy`
  // refuses, is a problem too, and none of its files is used.
  static Catalog scan(const std::vector<std::filesystem::path>& dirs,
                      const TrustPolicy& policy = {}, std::string_view kind = "executor");
  // A catalog of entries already read (by PluginMirror), indexed the same way.
  // With `incumbent` (the catalog serving until now), the files and keys it served keep
  // them in a conflict, and only the newcomers' claims are refused (core/manifests/claims.h).
  static Catalog fromEntries(std::vector<CatalogEntry> entries,
                             std::vector<CatalogProblem> problems,
                             const Catalog* incumbent = nullptr);

  // Every usable plugin, sorted by name, then by version from highest to lowest.
  const std::vector<CatalogEntry>& entries() const { return entries_; }
  // Every refused file or directory, sorted by path.
  const std::vector<CatalogProblem>& problems() const { return problems_; }
  // The problems of the directories `dirs` themselves, not of files in them: a plugin
  // directory that does not exist, cannot be listed or is refused by the trust rules.
  std::vector<CatalogProblem> directoryProblems(
      const std::vector<std::filesystem::path>& dirs) const;
  // Every key claimed by more than one plugin, sorted by key.
  const std::vector<CatalogConflict>& conflicts() const { return conflicts_; }

  // Named lookup, case-insensitive, over names, then aliases (a plugin named
  // "<x>-executor-plugin" has the implicit alias "<x>"), then the key with a trailing
  // "-executor-plugin" removed. `version` empty: the highest version; otherwise an exact
  // version or a prefix such as "1" or "1.2" (the highest match). nullptr if none, or if
  // the key routes to neither (see conflictFor()).
  const CatalogEntry* find(std::string_view key, std::string_view version = {}) const;
  // The conflict that keeps `key` (looked up as find() does) from routing anywhere, or
  // nullptr when it routes to a plugin or to none at all.
  const CatalogConflict* conflictFor(std::string_view key) const;
  // The lower-cased name of the plugin that exactly `lowered_key` reaches, or nullptr.
  const std::string* holderOf(const std::string& lowered_key) const;

  // The highest version of every plugin that lists `rpc` in `provides`, sorted by name.
  // Whether a poll may call them is the dispatcher's rule (takesPolls()).
  std::vector<const CatalogEntry*> providers(std::string_view rpc) const;
  // The highest version of every legacy plugin (no `provides`), sorted by name, then the
  // poll-only entries.
  std::vector<const CatalogEntry*> legacy() const;

  // Entries that polling calls but no name reaches: plugins only the registry knows,
  // not started yet, whose manifest is read when they start (so they are polled for every
  // RPC, as legacy plugins are, and decline the RPCs they turn out not to provide).
  // REQUIRES: called before the catalog is shared.
  void addPollOnly(std::vector<CatalogEntry> entries);
  const std::vector<CatalogEntry>& pollOnly() const { return poll_only_; }

 private:
  void buildIndex(const Catalog* incumbent);
  // The key find() and conflictFor() look up: `key` lower-cased, without a trailing
  // "-executor-plugin" when only that form is claimed.
  std::string keyFor(std::string_view key) const;

  std::vector<CatalogEntry> entries_;
  std::vector<CatalogProblem> problems_;
  std::vector<CatalogConflict> conflicts_;
  // lower-cased name -> indexes into entries_, highest version first
  std::unordered_map<std::string, std::vector<std::size_t>> by_name_;
  // lower-cased name or alias -> lower-cased name of the plugin it reaches
  std::unordered_map<std::string, std::string> by_key_;
  // lower-cased key that routes to neither -> index into conflicts_
  std::unordered_map<std::string, std::size_t> unrouted_;
  // rpc -> indexes of the highest version of each provider, sorted by name
  std::unordered_map<std::string, std::vector<std::size_t>> by_rpc_;
  std::vector<std::size_t> legacy_;
  std::vector<CatalogEntry> poll_only_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_MANIFESTS_CATALOG_H_

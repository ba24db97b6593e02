// core/manifests/plugin_mirror.h: private copies of the plugin files, for hot-loading.
//
// A plugin is loaded from a copy in a private runtime directory (mode 0700), never from
// the installed file, so that a later write to the installed file cannot touch code that
// is mapped. sync() brings the copies up to date with the plugin directories: a new or
// changed file (by inode, size and modification time) is checked against the trust
// rules on its opened descriptor, copied from that descriptor, and its manifest read
// from the copy. A file that fails leaves its previous copy in place, so the previous
// version keeps serving, and is reported as a problem (the caller logs it); a copy that
// could not be finished (a full file system) is removed at once. A copy is deleted when
// the last catalog entry that refers to it is gone. The runtime directory is made by
// core/manifests/runtime_dir.h, after removing those of runs that ended without removing
// theirs.
//
// Thread-safety: sync() from one thread at a time.
#ifndef PLUGBOARD_CORE_MANIFESTS_PLUGIN_MIRROR_H_
#define PLUGBOARD_CORE_MANIFESTS_PLUGIN_MIRROR_H_

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/manifests/catalog.h"
#include "core/base/expected.h"
#include "core/manifests/trust.h"

namespace plugboard::core {

struct MirrorChange {
  std::filesystem::path file;
  std::string name;
  std::string old_version;  // empty: a new plugin
  std::string new_version;  // empty: removed
};

struct MirrorState {
  std::vector<CatalogEntry> entries;   // file = the installed file, load_path = the copy
  std::vector<CatalogProblem> problems;
  std::vector<MirrorChange> changes;   // since the previous sync
};

class PluginMirror {
 public:
  // Creates the runtime directory under `parent` (default: the system temp directory),
  // first removing the runtime directories there whose owner is gone.
  static Expected<std::unique_ptr<PluginMirror>> create(const std::filesystem::path& parent = {});
  ~PluginMirror();
  PluginMirror(const PluginMirror&) = delete;
  PluginMirror& operator=(const PluginMirror&) = delete;

  MirrorState sync(const std::vector<std::filesystem::path>& dirs, const TrustPolicy& policy);
  const std::filesystem::path& directory() const { return dir_; }

 private:
  explicit PluginMirror(std::filesystem::path dir) : dir_(std::move(dir)) {}
  struct FileId {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    long long mtime_ns = 0;
    bool operator==(const FileId&) const = default;
  };
  struct Current {
    FileId id;
    CatalogEntry entry;
  };
  std::filesystem::path dir_;
  std::map<std::filesystem::path, Current> current_;  // by installed file
  unsigned long long counter_ = 0;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_MANIFESTS_PLUGIN_MIRROR_H_

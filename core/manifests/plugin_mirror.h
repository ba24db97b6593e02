// core/manifests/plugin_mirror.h: private copies of the plugin files, for hot-loading.
//
// A plugin is loaded from a private copy, never from the installed file, so that a later
// write to the installed file cannot touch code that is mapped. A copy is a file in a
// private runtime directory (mode 0700) when one can be made; else (a read-only root file
// system, as in an Argo agent pod) it lives in memory: a memfd, close-on-exec and sealed
// against every write, loaded as /proc/self/fd/N. sync() brings the copies up to date
// with the plugin directories: a new or changed file (by inode, size and modification
// time) is checked against the trust rules on its opened descriptor, copied from that
// descriptor, and its manifest read from the copy. A file that fails leaves its previous
// copy in place, so the previous version keeps serving, and is reported as a problem (the
// caller logs it); a copy that could not be finished (a full file system) is removed at
// once. A copy (a HeldFile) is deleted (or closed) when the last holder is gone: the
// mirror, a generation's plugin source, a started plugin. The runtime directory is made by
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
#include "core/manifests/held_file.h"
#include "core/base/expected.h"
#include "core/manifests/trust.h"

namespace plugboard::core {

struct MirrorChange {
  std::filesystem::path file;
  std::string name;
  std::string old_version;  // empty: a new plugin
  std::string new_version;  // empty: removed
};

// A plugin file with its private copy: the entry (file = the installed file) and the copy
// its plugin is loaded from, held (and so kept) by whoever holds this.
struct MirroredFile {
  CatalogEntry entry;
  std::shared_ptr<const HeldFile> copy;
};

struct MirrorState {
  std::vector<MirroredFile> entries;
  std::vector<CatalogProblem> problems;
  std::vector<MirrorChange> changes;   // since the previous sync
};

class PluginMirror {
 public:
  // Creates the runtime directory under `parent` (default: the system temp directory),
  // first removing the runtime directories there whose owner is gone. When none can be
  // made there, says so in one log line and keeps the copies in memory. Fails only when
  // memory copies cannot be made either (memfd_create refused).
  static Expected<std::unique_ptr<PluginMirror>> create(const std::filesystem::path& parent = {});
  ~PluginMirror();
  PluginMirror(const PluginMirror&) = delete;
  PluginMirror& operator=(const PluginMirror&) = delete;

  MirrorState sync(const std::vector<std::filesystem::path>& dirs, const TrustPolicy& policy);
  // The runtime directory; empty when the copies are in memory.
  const std::filesystem::path& directory() const { return dir_; }

 private:
  explicit PluginMirror(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // A private copy of the opened file `from` (installed as `file`), removed (or closed)
  // when the last holder lets it go.
  Expected<std::shared_ptr<const HeldFile>> copy(int from, const std::filesystem::path& file);
  struct FileId {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    long long mtime_ns = 0;
    bool operator==(const FileId&) const = default;
  };
  struct Current {
    FileId id;
    MirroredFile mirrored;
  };
  std::filesystem::path dir_;  // empty: copies in memory
  std::map<std::filesystem::path, Current> current_;  // by installed file
  unsigned long long counter_ = 0;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_MANIFESTS_PLUGIN_MIRROR_H_

#include "core/manifests/plugin_mirror.h"

#include "core/manifests/file_handle.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>
#include <plugboard/host/module.h>
#include <plugboard/host/spawn.h>

#include "core/base/text.h"
#include "core/manifests/elf_section.h"
#include "core/manifests/runtime_dir.h"

namespace plugboard::core {
namespace fs = std::filesystem;
namespace {

// Copies all of `from` to `out`; the error says why, naming `where` the copy was made.
Status copyBytes(int from, int out, const std::string& where) {
  char buf[1 << 16];
  off_t offset = 0;
  for (;;) {
    ssize_t n = ::pread(from, buf, sizeof buf, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error(std::string("cannot read: ") + std::strerror(errno), Error::Code::kIo);
    if (n == 0) return Status::Ok();
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(out, buf + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        return Error("cannot make a private copy " + where + ": " + std::strerror(errno),
                     Error::Code::kIo);
      }
      done += w;
    }
    offset += n;
  }
}

Status copyFrom(int from, const fs::path& to) {
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out < 0)
    return Error("cannot create " + to.string() + ": " + std::strerror(errno), Error::Code::kIo);
  // A copy that cannot be finished (a full file system, a file-size limit) is removed, so
  // that failed attempts do not fill the directory.
  if (Status copied = copyBytes(from, out, "in " + to.parent_path().string()); !copied) {
    ::close(out);
    ::unlink(to.c_str());
    return copied;
  }
  ::fchmod(out, 0500);  // nobody writes the copy again
  if (::close(out) != 0) {  // a file system may report a failed write only now
    ::unlink(to.c_str());
    return Error(
        "cannot make a private copy in " + to.parent_path().string() + ": " + std::strerror(errno),
        Error::Code::kIo);
  }
  return Status::Ok();
}


// A sealed memfd holding all of `from`, close-on-exec: no child inherits it unasked, and
// nobody (this process included) can write, grow or shrink it, or lift the seals.
Expected<int> copyToMemory(int from, const std::string& name) {
  const int out = ::memfd_create(("plugboard:" + name).c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (out < 0) {
    return Error(std::string("cannot make a private copy in memory: ") + std::strerror(errno),
                 Error::Code::kIo);
  }
  Status copied = copyBytes(from, out, "in memory");
  if (copied &&
      (::fchmod(out, 0500) != 0 ||
       ::fcntl(out, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0)) {
    copied = Error(std::string("cannot seal the private copy in memory: ") + std::strerror(errno),
                   Error::Code::kIo);
  }
  if (!copied) {
    ::close(out);
    return copied.error();
  }
  return out;
}

}  // namespace

Expected<std::unique_ptr<PluginMirror>> PluginMirror::create(const fs::path& parent) {
  std::error_code ec;
  const fs::path base = parent.empty() ? fs::temp_directory_path(ec) : parent;
  Expected<fs::path> dir =
      ec ? Expected<fs::path>(Error("cannot create a runtime directory in $TMPDIR (" +
                                    std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "") +
                                    "): " + ec.message()))
         : makeRuntimeDir(base);
  if (dir) {
    for (const auto& dead : removeDeadRuntimeDirs(base)) {
      spdlog::info("removed {}, left by a run that ended without removing it", dead.string());
    }
    return std::unique_ptr<PluginMirror>(new PluginMirror(std::move(*dir)));
  }
  spdlog::info("{}; private copies of plugins are kept in memory", dir.error().message());
  // Memory copies need memfd_create (Linux 3.17): a seccomp filter may refuse it.
  const int probe = ::memfd_create("plugboard:probe", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (probe < 0) {
    return Error(
        dir.error().message() +
            "; and no private copies in memory either: memfd_create: " + std::strerror(errno),
        Error::Code::kIo);
  }
  ::close(probe);
  return std::unique_ptr<PluginMirror>(new PluginMirror(fs::path()));
}

PluginMirror::~PluginMirror() {
  current_.clear();
  if (dir_.empty()) return;
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

Expected<std::shared_ptr<const HeldFile>> PluginMirror::copy(int from, const fs::path& file) {
  const std::string name = std::to_string(++counter_) + "-" + file.filename().string();
  if (!dir_.empty()) {
    const fs::path to = dir_ / name;
    if (Status copied = copyFrom(from, to); !copied) return copied.error();
    return HeldFile::removedAtEnd(to);
  }
  auto fd = copyToMemory(from, name);
  if (!fd) return fd.error();
  // Loaded as /proc/self/fd/N: not a name a still-mapped library already has.
  return HeldFile::open(host::Fd(*fd));
}

MirrorState PluginMirror::sync(const std::vector<fs::path>& dirs, const TrustPolicy& policy) {
  MirrorState state;
  std::map<fs::path, bool> seen;
  // A directory missing now may be created later; one refused keeps its copies out of use.
  const std::vector<fs::path> files = listPluginFiles(dirs, policy, state.problems);

  for (const auto& file : files) {
    seen[file] = true;
    auto keepPrevious = [&](const std::string& why) {
      state.problems.push_back(
          {file, why + (current_.count(file) ? "; the previous version keeps serving" : "")});
    };
    auto opened = host::openTrusted(file, policy.rules());
    if (!opened) {
      keepPrevious(opened.error().message());
      continue;
    }
    const int source = opened->fd.get();
    struct stat st {};
    ::fstat(source, &st);
    const FileId id{st.st_dev, st.st_ino, st.st_size,
                    static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
    auto cur = current_.find(file);
    if (cur != current_.end() && cur->second.id == id) continue;  // unchanged
    if (Status trusted = checkFileTrust(source, file, policy); !trusted) {
      keepPrevious(trusted.error().message());
      continue;
    }
    auto copied = copy(source, file);
    if (!copied) {
      keepPrevious(copied.error().message());
      continue;
    }
    std::shared_ptr<const HeldFile> held = std::move(*copied);  // deletes or closes the copy
    const fs::path copy_path = held->path();
    TrustPolicy copy_policy = policy;  // the copy is ours (0500 in a 0700 directory, or sealed)
    auto copy_file = FileHandle::open(copy_path);
    if (!copy_file) {
      keepPrevious(copy_file.error().message());
      continue;
    }
    auto entry = readPluginManifest(copy_file->fd(), copy_path, copy_policy);
    if (!entry) {
      keepPrevious(entry.error().message());
      continue;
    }
    entry->file = file;
    // Another plugin's file copied over this one: the old plugin is removed and the new
    // one added, not one plugin changing its version.
    const bool same_plugin =
        cur != current_.end() &&
        toLower(cur->second.mirrored.entry.manifest.name) == toLower(entry->manifest.name);
    if (cur != current_.end() && !same_plugin) {
      state.changes.push_back({file, cur->second.mirrored.entry.manifest.name,
                               cur->second.mirrored.entry.manifest.version.text(), ""});
    }
    state.changes.push_back({file, entry->manifest.name,
                             same_plugin ? cur->second.mirrored.entry.manifest.version.text() : "",
                             entry->manifest.version.text()});
    current_[file] = Current{id, {std::move(*entry), std::move(held)}};
  }
  for (auto it = current_.begin(); it != current_.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    state.changes.push_back(
        {it->first, it->second.mirrored.entry.manifest.name,
         it->second.mirrored.entry.manifest.version.text(), ""});
    it = current_.erase(it);
  }
  for (const auto& [file, cur] : current_) state.entries.push_back(cur.mirrored);
  return state;
}

}  // namespace plugboard::core

#include "core/manifests/plugin_mirror.h"

#include "core/manifests/file_handle.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "core/base/text.h"
#include "core/manifests/elf_section.h"
#include "core/manifests/runtime_dir.h"

namespace plugboard::core {
namespace fs = std::filesystem;
namespace {

// Deletes the copy when the last entry that refers to it is gone.
struct CopyFile {
  fs::path path;
  ~CopyFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

Status copyFrom(int from, const fs::path& to) {
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out < 0)
    return Error("cannot create " + to.string() + ": " + std::strerror(errno), Error::Code::kIo);
  // A copy that cannot be finished (a full file system, a file-size limit) is removed, so
  // that failed attempts do not fill the directory.
  auto fail = [&](std::string message) {
    ::close(out);
    ::unlink(to.c_str());
    return Error(std::move(message), Error::Code::kIo);
  };
  char buf[1 << 16];
  off_t offset = 0;
  for (;;) {
    ssize_t n = ::pread(from, buf, sizeof buf, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) break;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(out, buf + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        return fail("cannot make a private copy in " + to.parent_path().string() + ": " +
                    std::strerror(errno));
      }
      done += w;
    }
    offset += n;
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

}  // namespace

Expected<std::unique_ptr<PluginMirror>> PluginMirror::create(const fs::path& parent) {
  const fs::path base = parent.empty() ? fs::temp_directory_path() : parent;
  for (const auto& dir : removeDeadRuntimeDirs(base)) {
    spdlog::info("removed {}, left by a run that ended without removing it", dir.string());
  }
  auto dir = makeRuntimeDir(base);
  if (!dir) return dir.error();
  return std::unique_ptr<PluginMirror>(new PluginMirror(std::move(*dir)));
}

PluginMirror::~PluginMirror() {
  current_.clear();
  std::error_code ec;
  fs::remove_all(dir_, ec);
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
    auto opened = FileHandle::open(file);
    if (!opened) {
      keepPrevious(opened.error().message());
      continue;
    }
    const FileHandle& handle = *opened;
    struct stat st {};
    ::fstat(handle.fd(), &st);
    const FileId id{st.st_dev, st.st_ino, st.st_size,
                    static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
    auto cur = current_.find(file);
    if (cur != current_.end() && cur->second.id == id) continue;  // unchanged
    if (Status trusted = checkFileTrust(handle.fd(), file, policy); !trusted) {
      keepPrevious(trusted.error().message());
      continue;
    }
    const fs::path copy = dir_ / (std::to_string(++counter_) + "-" + file.filename().string());
    if (Status copied = copyFrom(handle.fd(), copy); !copied) {
      keepPrevious(copied.error().message());
      continue;
    }
    auto keep = std::shared_ptr<CopyFile>(new CopyFile{copy});  // one object: it deletes the copy
    TrustPolicy copy_policy = policy;  // the copy is ours (0500 in a 0700 directory)
    auto entry = readPluginFile(copy, copy_policy);
    if (!entry) {
      keepPrevious(entry.error().message());
      continue;
    }
    entry->file = file;
    entry->load_path = copy;
    entry->keep = keep;
    // Another plugin's file copied over this one: the old plugin is removed and the new
    // one added, not one plugin changing its version.
    const bool same_plugin =
        cur != current_.end() && toLower(cur->second.entry.manifest.name) == toLower(entry->manifest.name);
    if (cur != current_.end() && !same_plugin) {
      state.changes.push_back({file, cur->second.entry.manifest.name,
                               cur->second.entry.manifest.version.text(), ""});
    }
    state.changes.push_back({file, entry->manifest.name,
                             same_plugin ? cur->second.entry.manifest.version.text() : "",
                             entry->manifest.version.text()});
    current_[file] = Current{id, std::move(*entry)};
  }
  for (auto it = current_.begin(); it != current_.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    state.changes.push_back(
        {it->first, it->second.entry.manifest.name, it->second.entry.manifest.version.text(), ""});
    it = current_.erase(it);
  }
  for (const auto& [file, cur] : current_) state.entries.push_back(cur.entry);
  return state;
}

}  // namespace plugboard::core

// core/manifests/held_file.h: a file a plugin is loaded from, held for as long as a plugin
// may be loaded from it.
//
// Either a private copy on disk (core/manifests/plugin_mirror.h), removed when the last
// holder lets it go, or an open descriptor whose path is /proc/self/fd/N (a private copy in
// memory, or a plugin file checked where it is loaded from), closed then: until that
// moment N, and so the path, names this file alone. Its owners are explicit: the catalog's
// source of a plugin (core/launch/plugin_source.h), the launch target placed from it and
// the plugin started from it each hold a shared_ptr. Immutable; thread-safe.
#ifndef PLUGBOARD_CORE_MANIFESTS_HELD_FILE_H_
#define PLUGBOARD_CORE_MANIFESTS_HELD_FILE_H_

#include <filesystem>
#include <memory>
#include <system_error>

#include <plugboard/host/module.h>

namespace plugboard::core {

class HeldFile {
 public:
  // A file on disk that is ours: removed when the last holder lets it go.
  static std::shared_ptr<const HeldFile> removedAtEnd(std::filesystem::path path) {
    return std::shared_ptr<const HeldFile>(new HeldFile(std::move(path), host::Fd(), true));
  }
  // An open file, loaded as /proc/self/fd/N: closed when the last holder lets it go.
  static std::shared_ptr<const HeldFile> open(host::Fd fd) {
    std::filesystem::path path = host::loadablePath(fd);
    return std::shared_ptr<const HeldFile>(new HeldFile(std::move(path), std::move(fd), false));
  }
  ~HeldFile() {
    if (!remove_) return;
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  HeldFile(const HeldFile&) = delete;
  HeldFile& operator=(const HeldFile&) = delete;

  // What a deployer loads.
  const std::filesystem::path& path() const { return path_; }

 private:
  HeldFile(std::filesystem::path path, host::Fd fd, bool remove)
      : path_(std::move(path)), fd_(std::move(fd)), remove_(remove) {}

  std::filesystem::path path_;
  host::Fd fd_;  // open while held; may be empty
  bool remove_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_MANIFESTS_HELD_FILE_H_

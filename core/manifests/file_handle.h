// core/manifests/file_handle.h: a read-only file descriptor, closed on destruction.
//
// The trust checks, the ELF reader and the private copies all work on one opened
// descriptor, so that a path swapped after a check cannot slip another file in. Movable,
// not copyable; not thread-safe to move while in use.
#ifndef PLUGBOARD_CORE_MANIFESTS_FILE_HANDLE_H_
#define PLUGBOARD_CORE_MANIFESTS_FILE_HANDLE_H_

#include <filesystem>

#include "core/base/expected.h"

namespace plugboard::core {

class FileHandle {
 public:
  // Opens `file` for reading (following symbolic links). Errors are kIo and say why.
  static Expected<FileHandle> open(const std::filesystem::path& file);
  FileHandle(FileHandle&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileHandle& operator=(FileHandle&& other) noexcept;
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  ~FileHandle();

  int fd() const { return fd_; }

 private:
  explicit FileHandle(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_MANIFESTS_FILE_HANDLE_H_

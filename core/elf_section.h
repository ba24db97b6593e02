// core/elf_section.h: reads one section of an ELF shared object without loading it.
//
// Used by the catalog to read a plugin's manifest: no dlopen, no static initializer, no
// dependency of the file runs. Only the ELF header, the section header table, the section
// name table and the requested section are read, with bounds checked against the file
// size, so a truncated or hostile file yields an error, never a crash. Thread-safe.
#ifndef PLUGBOARD_CORE_ELF_SECTION_H_
#define PLUGBOARD_CORE_ELF_SECTION_H_

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/expected.h"

namespace plugboard::core {

// Sections larger than this are refused (a manifest is a few KiB).
inline constexpr std::size_t kMaxSectionBytes = 1 << 20;

// Returns the bytes of `section` in `file`. The error code is kNotFound when the file is
// a valid shared object without that section, kIo when it cannot be read, kInvalid when
// it is not a 64-bit little-endian ELF shared object for this machine or is truncated.
Expected<std::string> readElfSection(const std::filesystem::path& file,
                                     std::string_view section);

// The same on a file already open for reading. Does not close `fd`.
Expected<std::string> readElfSection(int fd, std::string_view section);

// A read-only descriptor, closed on destruction.
class FileHandle {
 public:
  // Opens `file` for reading (following symbolic links). fd() < 0 on failure, with
  // error() saying why.
  explicit FileHandle(const std::filesystem::path& file);
  ~FileHandle();
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  int fd() const { return fd_; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  std::string error_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_ELF_SECTION_H_

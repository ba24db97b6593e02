// core/manifests/elf_section.h: reads one section of an ELF shared object without loading it.
//
// Used by the catalog to read a plugin's manifest: no dlopen, no static initializer, no
// dependency of the file runs. Only the ELF header, the section header table, the section
// name table and the requested section are read, with bounds checked against the file
// size, so a truncated or hostile file yields an error, never a crash. Thread-safe.
#ifndef PLUGBOARD_CORE_MANIFESTS_ELF_SECTION_H_
#define PLUGBOARD_CORE_MANIFESTS_ELF_SECTION_H_

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/base/expected.h"

namespace plugboard::core {

// Sections larger than this are refused (a manifest is a few KiB).
inline constexpr std::size_t kMaxSectionBytes = 1 << 20;

// Returns the bytes of `section` in `file`. The error code is kNotFound when the file is
// a valid shared object without that section, kIo when it cannot be read, kInvalid when
// it is not a 64-bit little-endian ELF shared object for this machine or is truncated.
Expected<std::string> readElfSection(const std::filesystem::path& file, std::string_view section);

// The same on a file already open for reading. Does not close `fd`.
Expected<std::string> readElfSection(int fd, std::string_view section);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_MANIFESTS_ELF_SECTION_H_

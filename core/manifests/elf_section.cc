#include "core/manifests/elf_section.h"

#include "core/manifests/file_handle.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace plugboard::core {
namespace {

#if defined(__x86_64__)
constexpr int kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kHostMachine = EM_AARCH64;
#else
constexpr int kHostMachine = EM_NONE;  // not checked
#endif

bool readAt(int fd, void* buf, std::size_t len, off_t offset) {
  auto* p = static_cast<char*>(buf);
  while (len > 0) {
    ssize_t n = ::pread(fd, p, len, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<std::size_t>(n);
    offset += n;
  }
  return true;
}

Error truncated(std::uint64_t needed, std::uint64_t size) {
  return Error("truncated ELF file: its headers need " + std::to_string(needed) +
               " bytes but the file has " + std::to_string(size));
}

}  // namespace

Expected<std::string> readElfSection(const std::filesystem::path& file, std::string_view section) {
  auto handle = FileHandle::open(file);
  if (!handle) return handle.error();
  return readElfSection(handle->fd(), section);
}

Expected<std::string> readElfSection(int fd, std::string_view section) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return Error(std::string("cannot stat: ") + std::strerror(errno), Error::Code::kIo);
  }
  if (!S_ISREG(st.st_mode)) return Error("not a regular file", Error::Code::kIo);
  const auto size = static_cast<std::uint64_t>(st.st_size);

  Elf64_Ehdr eh{};
  if (size < EI_NIDENT || !readAt(fd, eh.e_ident, EI_NIDENT, 0) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    return Error("not an ELF file (no ELF magic bytes at its start)");
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return Error("not a 64-bit ELF file");
  if (eh.e_ident[EI_DATA] != ELFDATA2LSB) return Error("not a little-endian ELF file");
  if (size < sizeof eh) return truncated(sizeof eh, size);
  if (!readAt(fd, &eh, sizeof eh, 0)) {
    return Error(std::string("cannot read: ") + std::strerror(errno), Error::Code::kIo);
  }
  if (eh.e_type != ET_DYN) {
    return Error("not a shared object (ELF type " + std::to_string(eh.e_type) + ")");
  }
  if (kHostMachine != EM_NONE && eh.e_machine != kHostMachine) {
    return Error("built for another machine (ELF machine " + std::to_string(eh.e_machine) +
                 ", this host is " + std::to_string(kHostMachine) + ")");
  }
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shstrndx >= eh.e_shnum) {
    return Error("ELF file has no usable section header table");
  }
  const std::uint64_t table_end = eh.e_shoff + std::uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr);
  if (eh.e_shoff > size || table_end > size) return truncated(table_end, size);

  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  if (!readAt(fd, sections.data(), sections.size() * sizeof(Elf64_Shdr),
              static_cast<off_t>(eh.e_shoff))) {
    return Error(std::string("cannot read: ") + std::strerror(errno), Error::Code::kIo);
  }
  const Elf64_Shdr& names_hdr = sections[eh.e_shstrndx];
  if (names_hdr.sh_offset > size || names_hdr.sh_size > size - names_hdr.sh_offset ||
      names_hdr.sh_size > kMaxSectionBytes) {
    return truncated(names_hdr.sh_offset + names_hdr.sh_size, size);
  }
  std::string names(names_hdr.sh_size, '\0');
  if (!readAt(fd, names.data(), names.size(), static_cast<off_t>(names_hdr.sh_offset))) {
    return Error(std::string("cannot read: ") + std::strerror(errno), Error::Code::kIo);
  }

  for (const Elf64_Shdr& sh : sections) {
    if (sh.sh_name >= names.size()) continue;
    const char* name = names.c_str() + sh.sh_name;
    if (section != name) continue;
    if (sh.sh_type == SHT_NOBITS) return Error("section " + std::string(section) + " is empty");
    if (sh.sh_size > kMaxSectionBytes) {
      return Error("section " + std::string(section) + " is larger than " +
                   std::to_string(kMaxSectionBytes) + " bytes");
    }
    if (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset) {
      return truncated(sh.sh_offset + sh.sh_size, size);
    }
    std::string bytes(sh.sh_size, '\0');
    if (!readAt(fd, bytes.data(), bytes.size(), static_cast<off_t>(sh.sh_offset))) {
      return Error(std::string("cannot read: ") + std::strerror(errno), Error::Code::kIo);
    }
    return bytes;
  }
  return Error("no " + std::string(section) + " section", Error::Code::kNotFound);
}

}  // namespace plugboard::core

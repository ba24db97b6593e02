#include "deployers/common/usage.h"

#include <dirent.h>
#include <sys/stat.h>

#include <string>

namespace plugboard::deployer_common {
namespace {

std::string procPath(pid_t pid, const char* entry) {
  return "/proc/" + std::to_string(pid) + "/" + entry;
}

// Entries of a /proc directory other than "." and "..".
std::optional<std::uint64_t> countEntries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return std::nullopt;
  std::uint64_t n = 0;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(d);
  return n;
}

}  // namespace

std::optional<std::uint64_t> openDescriptors(pid_t pid) {
  const std::string dir = procPath(pid, "fd");
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return std::nullopt;
  // A live process has at least one descriptor (the protocol's), so a size of 0 means a
  // kernel before 6.2, which does not count them there.
  if (st.st_size > 0) return static_cast<std::uint64_t>(st.st_size);
  return countEntries(dir);
}

std::optional<std::uint64_t> threadCount(pid_t pid) {
  const std::string dir = procPath(pid, "task");
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return std::nullopt;
  if (st.st_nlink > 2) return static_cast<std::uint64_t>(st.st_nlink - 2);
  return countEntries(dir);  // a file system that does not count them in the link count
}

}  // namespace plugboard::deployer_common

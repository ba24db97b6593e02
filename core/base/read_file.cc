#include "core/base/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace plugboard::core {
namespace {

Error cannotRead(const std::filesystem::path& file, const std::string& what,
                 const std::string& why) {
  return Error(file.string() + ": cannot read the " + what + ": " + why, Error::Code::kIo);
}

std::string kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "it is a directory";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "it is a device, not a regular file";
  if (S_ISFIFO(mode)) return "it is a pipe, not a regular file";
  if (S_ISSOCK(mode)) return "it is a socket, not a regular file";
  return "it is not a regular file";
}

std::string tooLarge(std::size_t limit) {
  return "it is larger than " + std::to_string(limit) + " bytes";
}

}  // namespace

Expected<std::string> readOpenedFile(int fd, const std::filesystem::path& file,
                                     const std::string& what, std::size_t limit) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return cannotRead(file, what, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return cannotRead(file, what, kindOf(st.st_mode));
  if (static_cast<unsigned long long>(st.st_size) > limit) {
    return cannotRead(file, what, tooLarge(limit));
  }
  // Opened without blocking; a regular file reads the same either way.
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return cannotRead(file, what, std::strerror(errno));
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > limit) {
      return cannotRead(file, what, tooLarge(limit));  // it grew while read
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

Expected<std::string> readTextFile(const std::filesystem::path& file, const std::string& what,
                                   std::size_t limit) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    return cannotRead(file, what, errno == ENOENT ? "no such file" : std::strerror(errno));
  }
  auto text = readOpenedFile(fd, file, what, limit);
  ::close(fd);
  return text;
}

}  // namespace plugboard::core

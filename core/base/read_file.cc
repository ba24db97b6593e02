#include "core/base/read_file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace plugboard::core {
namespace {

Error cannotRead(const std::filesystem::path& file, const std::string& what, const std::string& why,
                 Error::Code code = Error::Code::kIo) {
  return Error(file.string() + ": cannot read the " + what + ": " + why, code);
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

namespace {

constexpr int kOpenFlags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;

// Closes a descriptor when it goes.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Whether `path` is `dir` or lies in it, both absolute and normal.
bool isBeneath(const std::filesystem::path& path, const std::filesystem::path& dir) {
  auto d = dir.begin(), p = path.begin();
  for (; d != dir.end() && !d->empty(); ++d, ++p) {
    if (p == path.end() || *p != *d) return false;
  }
  return true;
}

// `fd` opened `name` from `dir_fd` without openat2: the file it holds must lie in `real_dir`.
bool openedBeneath(int fd, const std::filesystem::path& real_dir) {
  std::error_code ec;
  const auto opened = std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd), ec);
  return !ec && opened.is_absolute() && isBeneath(opened.lexically_normal(), real_dir);
}

}  // namespace

Expected<std::string> readTextFileBeneath(const std::filesystem::path& dir,
                                          const std::filesystem::path& name,
                                          const std::string& what, std::size_t limit) {
  std::error_code ec;
  const std::filesystem::path base = dir.empty() ? std::filesystem::path(".") : dir;
  const auto outside = [&] {
    return cannotRead(name, what, "it is outside " + base.string(), Error::Code::kUntrusted);
  };
  std::filesystem::path relative = name;
  if (name.is_absolute()) {
    // Absolute: only as a name within the directory, as written or as it really is.
    const auto lexical = std::filesystem::absolute(base, ec).lexically_normal();
    const auto real = std::filesystem::canonical(base, ec);
    const auto target = name.lexically_normal();
    if (isBeneath(target, lexical)) {
      relative = target.lexically_relative(lexical);
    } else if (!ec && isBeneath(target, real)) {
      relative = target.lexically_relative(real);
    } else {
      return outside();
    }
    if (relative.empty()) relative = ".";
  }
  Fd dir_fd{::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir_fd.fd < 0) return cannotRead(base, "directory", std::strerror(errno));
  open_how how{};
  how.flags = kOpenFlags;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  Fd file{static_cast<int>(::syscall(SYS_openat2, dir_fd.fd, relative.c_str(), &how, sizeof how))};
  if (file.fd < 0 && (errno == ENOSYS || errno == EPERM)) {
    // No openat2 (an older kernel, a seccomp filter): open, then check what was opened.
    const auto real_dir = std::filesystem::canonical(base, ec);
    if (ec) return cannotRead(base, "directory", ec.message());
    file.fd = ::openat(dir_fd.fd, relative.c_str(), kOpenFlags);
    if (file.fd >= 0 && !openedBeneath(file.fd, real_dir)) return outside();
  }
  if (file.fd < 0) {
    if (errno == EXDEV) return outside();  // RESOLVE_BENEATH: the name leads out
    return cannotRead(name, what, errno == ENOENT ? "no such file" : std::strerror(errno));
  }
  return readOpenedFile(file.fd, name, what, limit);
}

}  // namespace plugboard::core

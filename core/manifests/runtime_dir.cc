#include "core/manifests/runtime_dir.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace plugboard::core {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kPrefix = "plugboard-runtime-";
constexpr const char* kOwnerFile = ".owner";

struct Owner {
  long long pid = 0;
  std::string start;  // the process's start time, in clock ticks since boot
  std::string boot;   // /proc/sys/kernel/random/boot_id
  std::string pidns;  // the target of /proc/self/ns/pid
  bool operator==(const Owner&) const = default;
};

std::string firstLine(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// Field 22 of /proc/<pid>/stat, or nullopt when there is no such process.
std::optional<std::string> startTime(long long pid) {
  const std::string stat = firstLine("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return field;
  }
  return std::nullopt;
}

Owner self() {
  std::error_code ec;
  return {static_cast<long long>(::getpid()), startTime(::getpid()).value_or(""),
          firstLine("/proc/sys/kernel/random/boot_id"),
          fs::read_symlink("/proc/self/ns/pid", ec).string()};
}

std::optional<Owner> readOwner(const fs::path& dir) {
  std::ifstream in(dir / kOwnerFile);
  Owner o;
  if (!(in >> o.pid >> o.start >> o.boot >> o.pidns) || o.pid <= 0) return std::nullopt;
  return o;
}

bool ownerGone(const Owner& owner, const Owner& me) {
  if (owner.boot != me.boot) return true;     // made before the last boot
  if (owner.pidns != me.pidns) return false;  // its pids are not ours to look up
  const auto start = startTime(owner.pid);
  return !start || *start != owner.start;  // no such process, or the pid was reused
}

}  // namespace

Expected<fs::path> makeRuntimeDir(const fs::path& parent) {
  std::string pattern = (parent / (std::string(kPrefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {  // mkdtemp makes it 0700
    return Error(
        "cannot create a runtime directory in " + parent.string() + ": " + std::strerror(errno),
        Error::Code::kIo);
  }
  const fs::path dir = pattern;
  const Owner me = self();
  std::ofstream out(dir / kOwnerFile);
  out << me.pid << ' ' << me.start << ' ' << me.boot << ' ' << me.pidns << '\n';
  out.close();
  if (!out) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    return Error("cannot write " + (dir / kOwnerFile).string() + ": " + std::strerror(errno),
                 Error::Code::kIo);
  }
  return dir;
}

std::vector<fs::path> removeDeadRuntimeDirs(const fs::path& parent) {
  std::vector<fs::path> removed;
  const Owner me = self();
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path dir = it->path();
    if (!dir.filename().string().starts_with(kPrefix)) continue;
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    const auto owner = readOwner(dir);
    if (!owner || *owner == me || !ownerGone(*owner, me)) continue;
    std::error_code removing;
    if (fs::remove_all(dir, removing) > 0 && !removing) removed.push_back(dir);
  }
  return removed;
}

}  // namespace plugboard::core

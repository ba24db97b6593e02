// plugboard/host/owner.h: see there.
#include "plugboard/host/owner.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace plugboard::host {
namespace fs = std::filesystem;
namespace {

constexpr const char* kOwnerFile = ".owner";

struct OwnerRecord {
  long long pid = 0;
  std::string start;  // the process's start time, in clock ticks since boot
  std::string boot;   // /proc/sys/kernel/random/boot_id
  std::string pidns;  // the target of /proc/self/ns/pid
  bool operator==(const OwnerRecord&) const = default;
};

std::string ownerFileLine(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// Field 22 of /proc/<pid>/stat, or nullopt when there is no such process.
std::optional<std::string> processStartTime(long long pid) {
  const std::string stat = ownerFileLine("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return field;
  }
  return std::nullopt;
}

const OwnerRecord& thisProcess() {
  static const OwnerRecord me = [] {
    std::error_code ec;
    return OwnerRecord{static_cast<long long>(::getpid()),
                       processStartTime(::getpid()).value_or(""),
                       ownerFileLine("/proc/sys/kernel/random/boot_id"),
                       fs::read_symlink("/proc/self/ns/pid", ec).string()};
  }();
  return me;
}

std::optional<OwnerRecord> parseRecord(std::string_view record) {
  std::istringstream in{std::string(record)};
  OwnerRecord o;
  if (!(in >> o.pid >> o.start >> o.boot >> o.pidns) || o.pid <= 0) return std::nullopt;
  return o;
}

}  // namespace

const std::string& ownerRecord() {
  static const std::string record = std::to_string(thisProcess().pid) + ' ' + thisProcess().start +
                                    ' ' + thisProcess().boot + ' ' + thisProcess().pidns;
  return record;
}

const std::string& ownerTag() {
  static const std::string tag = std::to_string(thisProcess().pid) + '.' + thisProcess().start;
  return tag;
}

Liveness ownerLiveness(std::string_view record) {
  const auto owner = parseRecord(record);
  if (!owner) return Liveness::kUnknown;
  const OwnerRecord& me = thisProcess();
  if (*owner == me) return Liveness::kAlive;
  if (owner->boot != me.boot) return Liveness::kGone;       // made before the last boot
  if (owner->pidns != me.pidns) return Liveness::kUnknown;  // its pids are not ours to look up
  const auto start = processStartTime(owner->pid);
  return !start || *start != owner->start ? Liveness::kGone : Liveness::kAlive;
}

bool ownerTagAlive(std::string_view tag) {
  const auto dot = tag.find('.');
  if (dot == std::string_view::npos) return true;
  char* end = nullptr;
  const std::string pid(tag.substr(0, dot));
  const long long n = std::strtoll(pid.c_str(), &end, 10);
  if (end == pid.c_str() || *end != '\0' || n <= 0) return true;
  const auto start = processStartTime(n);
  return start && *start == tag.substr(dot + 1);
}

Expected<fs::path> makeOwnedDirectory(const fs::path& parent, std::string_view prefix) {
  std::string pattern = (parent / (std::string(prefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {  // mkdtemp makes it 0700
    return Error("cannot create a directory in " + parent.string() + ": " + std::strerror(errno),
                 Error::Code::kIo);
  }
  const fs::path dir = pattern;
  std::ofstream out(dir / kOwnerFile);
  out << ownerRecord() << '\n';
  out.close();
  if (!out) {
    const int saved = errno;
    std::error_code ec;
    fs::remove_all(dir, ec);
    return Error("cannot write " + (dir / kOwnerFile).string() + ": " + std::strerror(saved),
                 Error::Code::kIo);
  }
  return dir;
}

std::vector<fs::path> removeDeadDirectories(const fs::path& parent, std::string_view prefix) {
  std::vector<fs::path> removed;
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path dir = it->path();
    if (!dir.filename().string().starts_with(prefix)) continue;
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    if (ownerLiveness(ownerFileLine(dir / kOwnerFile)) != Liveness::kGone) continue;
    std::error_code removing;
    if (fs::remove_all(dir, removing) > 0 && !removing) removed.push_back(dir);
  }
  return removed;
}

}  // namespace plugboard::host

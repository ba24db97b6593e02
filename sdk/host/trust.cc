#include "plugboard/host/trust.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <system_error>

namespace plugboard::host {
namespace {

namespace fs = std::filesystem;
constexpr auto kUntrusted = Error::Code::kUntrusted;

std::string octalMode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

std::string userName(uid_t uid) {
  if (const passwd* pw = ::getpwuid(uid)) return pw->pw_name;
  return "uid " + std::to_string(uid);
}

bool trustedOwner(uid_t uid, const TrustRules& rules) {
  return uid == 0 || uid == ::geteuid() ||
         std::find(rules.owners.begin(), rules.owners.end(), uid) != rules.owners.end();
}

// The rules applied to one stat result. `what` names the object ("file", "directory /srv
// above it"), `path` is what the fix names. A directory above the checked one (`above`)
// may be writable by others when it is sticky and trusted-owned, as /tmp is.
Status checkStat(const struct stat& st, const fs::path& path, std::string_view what,
                 const TrustRules& rules, bool above = false) {
  if (!rules.strict) return Status::Ok();
  const std::string p = path.string();
  const bool sticky_ok =
      above && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) && trustedOwner(st.st_uid, rules);
  if ((st.st_mode & S_IWOTH) && !sticky_ok) {
    return Error(std::string(what) + " is writable by others (mode " + octalMode(st.st_mode) +
                     "); run chmod o-w " + p,
                 kUntrusted);
  }
  if ((st.st_mode & S_IWGRP) && !sticky_ok) {
    return Error(std::string(what) + " is writable by group (mode " + octalMode(st.st_mode) +
                     "); run chmod g-w " + p,
                 kUntrusted);
  }
  if (!trustedOwner(st.st_uid, rules)) {
    const uid_t self = ::geteuid();
    const std::string owners =
        self == 0 ? "root" : "root or " + userName(self) + " (the runtime's user)";
    return Error(std::string(what) + " is owned by " + userName(st.st_uid) + ", not by " +
                     owners + "; run chown " + userName(self) + " " + p,
                 kUntrusted);
  }
  return Status::Ok();
}

void addParents(const fs::path& path, std::vector<fs::path>& out, std::set<fs::path>& seen) {
  for (fs::path dir = path.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (seen.insert(dir).second) out.push_back(dir);
    if (dir == dir.root_path()) break;
  }
}

Status checkEntry(const fs::directory_entry& entry, const TrustRules& rules) {
  std::error_code ec;
  const fs::path& path = entry.path();
  if (entry.is_symlink(ec)) {
    if (entry.is_directory(ec)) {
      if (Status st = checkDirectory(path, rules, "directory " + path.string()); !st) return st;
      return checkDirectoriesAbove(path, rules);
    }
    Status st = checkFile(path, rules);
    if (!st && st.error().message().starts_with("file ")) {  // name the entry, not "file"
      return Error("file " + path.string() + st.error().message().substr(4), st.error().code());
    }
    return st;
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    return Error("cannot examine " + path.string() + ": " + std::strerror(errno), Error::Code::kIo);
  }
  const char* kind = S_ISDIR(st.st_mode) ? "directory " : "file ";
  return checkStat(st, path, kind + path.string(), rules);
}

}  // namespace

nlohmann::json TrustRules::toJson() const { return {{"strict", strict}, {"owners", owners}}; }

TrustRules rulesOf(const nlohmann::json& artifact) {
  TrustRules rules;
  if (!artifact.is_object()) return rules;
  const auto it = artifact.find(kTrustMember);
  if (it == artifact.end() || !it->is_object()) return rules;
  if (auto s = it->find("strict"); s != it->end() && s->is_boolean()) rules.strict = s->get<bool>();
  if (auto o = it->find("owners"); o != it->end() && o->is_array()) {
    for (const auto& uid : *o) {
      if (uid.is_number_unsigned()) rules.owners.push_back(uid.get<uid_t>());
    }
  }
  return rules;
}

Status checkOpenedFile(int fd, const fs::path& file, const TrustRules& rules) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return Error(std::string("cannot stat: ") + std::strerror(errno), Error::Code::kIo);
  }
  return checkStat(st, file, "file", rules);
}

Status checkDirectory(const fs::path& dir, const TrustRules& rules, std::string_view what) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return Error("cannot read " + std::string(what) + ": " + std::strerror(errno),
                 Error::Code::kIo);
  }
  return checkStat(st, dir, what, rules);
}

Status checkDirectoriesAbove(const fs::path& path, const TrustRules& rules) {
  if (!rules.strict) return Status::Ok();
  std::error_code ec;
  const fs::path written = fs::absolute(path, ec).lexically_normal();
  std::vector<fs::path> dirs;
  std::set<fs::path> seen;
  addParents(written, dirs, seen);
  if (const fs::path real = fs::canonical(path, ec); !ec && real != written) {
    addParents(real, dirs, seen);
  }
  for (const auto& dir : dirs) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
      return Error(
          "cannot examine directory " + dir.string() + " above it: " + std::strerror(errno),
          Error::Code::kIo);
    }
    if (Status s = checkStat(st, dir, "directory " + dir.string() + " above it", rules, true); !s) {
      return s;
    }
  }
  return Status::Ok();
}

Status checkFile(const fs::path& file, const TrustRules& rules) {
  if (!rules.strict) return Status::Ok();
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return Error(std::string("cannot open: ") + std::strerror(errno), Error::Code::kIo);
  }
  Status st = checkOpenedFile(fd, file, rules);
  ::close(fd);
  if (!st) return st;
  return checkDirectoriesAbove(file, rules);
}

Status checkTree(const fs::path& dir, const TrustRules& rules, std::string_view what) {
  if (!rules.strict) return Status::Ok();
  if (Status st = checkDirectory(dir, rules, what); !st) return st;
  if (Status st = checkDirectoriesAbove(dir, rules); !st) return st;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (Status st = checkEntry(*it, rules); !st) return st;
  }
  if (ec) {
    return Error("cannot read " + std::string(what) + ": " + ec.message(), Error::Code::kIo);
  }
  return Status::Ok();
}

Status refusal(const fs::path& file, Status st) {
  if (st) return st;
  return Error(file.string() + ": refused: " + st.error().message(), st.error().code());
}

}  // namespace plugboard::host

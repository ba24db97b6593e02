#include "plugboard/host/trust.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
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

Error ioError(const std::string& what) {
  return Error(what + ": " + std::strerror(errno), Error::Code::kIo);
}

// The components of `text`, in order, without empty ones.
void pushComponents(const std::string& text, std::deque<std::string>& out) {
  std::deque<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t slash = std::min(text.find('/', start), text.size());
    if (slash > start) parts.push_back(text.substr(start, slash - start));
    start = slash + 1;
  }
  out.insert(out.begin(), parts.begin(), parts.end());
}

// What resolve() ends at: the last component, not opened, and the directory holding it.
struct Resolved {
  Fd dir;             // O_PATH descriptor of the directory holding `name`
  std::string name;   // "" when the path ends at a directory (then `dir` is it)
  fs::path path;      // absolute, no links
  struct stat st {};  // lstat of `name` (or of `dir`)
};

// Walks `path` one component at a time as the top of trust.h says: every directory passed
// through is opened with O_NOFOLLOW, checked on its descriptor (as a directory above), and
// links are read only from checked directories. An entry of a sticky directory others may
// write must be owned by a trusted user. The last component is not followed if it is not
// a link, and not opened.
Expected<Resolved> resolve(const fs::path& path, const TrustRules& rules) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  if (ec) return Error("cannot resolve: " + ec.message(), Error::Code::kIo);
  std::deque<std::string> todo;
  pushComponents(absolute.string(), todo);

  struct Dir {
    Fd fd;
    fs::path path;
    struct stat st {};
  };
  std::vector<Dir> stack;  // the directories from the root to where the walk is
  std::string via;         // the last link followed, for messages
  auto through = [&] { return via.empty() ? std::string() : " (through the link " + via + ")"; };
  auto enter = [&](Fd fd, fs::path dir) -> Status {
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return ioError("cannot examine directory " + dir.string());
    if (Status s = checkStat(st, dir, "directory " + dir.string() + " above it" + through(), rules,
                             true);
        !s) {
      return s;
    }
    stack.push_back({std::move(fd), std::move(dir), st});
    return Status::Ok();
  };
  if (Status s = enter(Fd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)), "/"); !s)
    return s.error();

  int links = 0;
  while (!todo.empty()) {
    const std::string name = std::move(todo.front());
    todo.pop_front();
    if (name == ".") continue;
    if (name == "..") {
      if (stack.size() > 1) stack.pop_back();
      continue;
    }
    const Dir& dir = stack.back();
    const fs::path here = dir.path / name;
    struct stat st {};
    if (::fstatat(dir.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      // A last component that is missing is left to the caller (openTrusted() fails).
      if (errno != ENOENT || !todo.empty()) return ioError("cannot open " + here.string());
      Resolved out;
      out.dir = Fd(::fcntl(dir.fd.get(), F_DUPFD_CLOEXEC, 0));
      out.name = name;
      out.path = here;
      return out;
    }
    // In a sticky directory others may write (/tmp) only a trusted user's entry is ours.
    if (rules.strict && (dir.st.st_mode & (S_IWOTH | S_IWGRP)) && !trustedOwner(st.st_uid, rules)) {
      return Error(here.string() + " is owned by " + userName(st.st_uid) + " in directory " +
                       dir.path.string() + ", which others may write (mode " +
                       octalMode(dir.st.st_mode) + "); move it to a directory only root may write",
                   kUntrusted);
    }
    if (S_ISLNK(st.st_mode)) {
      if (++links > 40) {
        errno = ELOOP;
        return ioError("cannot open " + absolute.string());
      }
      std::string target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 255) + 1, '\0');
      const ssize_t n = ::readlinkat(dir.fd.get(), name.c_str(), target.data(), target.size());
      if (n < 0) return ioError("cannot read the link " + here.string());
      target.resize(static_cast<std::size_t>(n));
      if (target.starts_with("/")) stack.resize(1);
      via = here.string();
      pushComponents(target, todo);
      continue;
    }
    if (todo.empty()) {
      Resolved out;
      out.dir = Fd(::fcntl(dir.fd.get(), F_DUPFD_CLOEXEC, 0));
      out.name = name;
      out.path = here;
      out.st = st;
      return out;
    }
    if (!S_ISDIR(st.st_mode)) {
      errno = ENOTDIR;
      return ioError("cannot open " + here.string());
    }
    Fd next(::openat(dir.fd.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) return ioError("cannot open directory " + here.string());
    if (Status s = enter(std::move(next), here); !s) return s.error();
  }
  // The path ends at a directory already entered ("/", or a trailing "..").
  Dir& top = stack.back();
  Resolved out;
  out.dir = Fd(::fcntl(top.fd.get(), F_DUPFD_CLOEXEC, 0));
  out.path = top.path;
  out.st = top.st;
  return out;
}

Expected<TrustedFile> openTrustedAs(const fs::path& path, const TrustRules& rules,
                                    const std::string& name);

Status checkEntry(const fs::directory_entry& entry, const TrustRules& rules) {
  std::error_code ec;
  const fs::path& path = entry.path();
  if (entry.is_symlink(ec)) {
    if (entry.is_directory(ec)) {
      if (Status st = checkDirectory(path, rules, "directory " + path.string()); !st) return st;
      return checkDirectoriesAbove(path, rules);
    }
    // The entry is named, not "file".
    auto opened = openTrustedAs(path, rules, "file " + path.string());
    if (!opened) return opened.error();
    return Status::Ok();
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
  auto resolved = resolve(path, rules);
  if (!resolved) return resolved.error();
  return Status::Ok();
}

namespace {

// openTrusted(), with `name` what the messages about the file itself call it ("file", or
// the entry of a tree that links to it), while the messages about the directories on the
// way name those.
Expected<TrustedFile> openTrustedAs(const fs::path& path, const TrustRules& rules,
                                    const std::string& name) {
  if (!rules.strict) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (fd.get() < 0) return ioError("cannot open");
    std::error_code ec;
    return TrustedFile{std::move(fd), fs::absolute(path, ec)};
  }
  auto resolved = resolve(path, rules);
  if (!resolved) return resolved.error();
  Fd fd(resolved->name.empty()
            ? ::openat(resolved->dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            : ::openat(resolved->dir.get(), resolved->name.c_str(),
                       O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) return ioError("cannot open");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ioError("cannot stat");
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    return Error("not a regular file or a directory", Error::Code::kIo);
  }
  const bool is_dir = S_ISDIR(st.st_mode);
  if (Status s = checkStat(st, resolved->path, is_dir ? "directory" : name, rules); !s) {
    return s.error();
  }
  return TrustedFile{std::move(fd), std::move(resolved->path)};
}

}  // namespace

Expected<TrustedFile> openTrusted(const fs::path& path, const TrustRules& rules) {
  return openTrustedAs(path, rules, "file");
}

Status checkFile(const fs::path& file, const TrustRules& rules) {
  if (!rules.strict) return Status::Ok();
  auto opened = openTrusted(file, rules);
  if (!opened) return opened.error();
  return Status::Ok();
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

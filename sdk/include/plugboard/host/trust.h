// plugboard/host/trust.h: which files the runtime and its deployers are willing to turn into
// code (load, import, execute), one set of rules for all of them.
//
// Like sshd's StrictModes: a file is refused when it is writable by group or others, or
// owned by a user other than root, the process's effective user or a configured owner;
// and so is every directory above it, up to the root, since whoever may write a directory
// may replace what is in it. A directory above that is writable by others but sticky and
// owned by a trusted user (/tmp) is accepted for the entries a trusted user owns there:
// others may add entries but not replace ours. Every refusal says which rule failed and how
// to fix it ("file is writable by group (mode 0664); run chmod g-w /p/x.so"); callers add
// which file was refused.
//
// Symbolic links are resolved here, one component at a time, never by the kernel's path
// walk: each directory passed through is opened (without following links), checked on its
// descriptor, and the next component looked up below that descriptor. A link is read only
// from a directory that passed, so a link that lives in, or leads through, a directory
// another user may write is refused like a file others may write. openTrusted() hands back
// the descriptor of what it checked: load and read from it (/proc/self/fd/N), never by the
// path again, or a path swapped after the check slips another file in.
//
// The runtime hands its rules ([trust] in the configuration) to a deployer as the member
// "trust" of each artifact; a deployer reads them with rulesOf() and checks every further
// file it turns into code (a module it imports, an interpreter it runs) with checkFile()
// or checkTree(). Free functions and value types; thread-safe.
#ifndef PLUGBOARD_HOST_TRUST_H_
#define PLUGBOARD_HOST_TRUST_H_

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugboard/host/expected.h"
#include "plugboard/host/spawn.h"

namespace plugboard::host {

// The member of an artifact that carries the runtime's rules.
inline constexpr const char* kTrustMember = "trust";

struct TrustRules {
  // Check modes and owners. Off only when the operator says so ([trust] strict = false).
  bool strict = true;
  // Owners besides root and the process's effective user.
  std::vector<uid_t> owners;

  // {"strict": true, "owners": [1000]}
  nlohmann::json toJson() const;
};

// The rules in `artifact`'s "trust" member; the default (strict) rules when there is none
// or it is malformed, so that a missing member never relaxes a check.
TrustRules rulesOf(const nlohmann::json& artifact);

// A file or directory opened by openTrusted().
struct TrustedFile {
  Fd fd;                           // O_RDONLY, close-on-exec
  std::filesystem::path resolved;  // absolute, with no symbolic link in it
  // "/proc/self/fd/N": the opened file itself, whatever later happens to any path to it.
  std::string procPath() const { return "/proc/self/fd/" + std::to_string(fd.get()); }
};

// Opens `path` as described at the top of this file and checks what it opened: a regular
// file or a directory, its mode and owner, and every directory on the way, links included.
// Errors are kUntrusted ("directory /w above it (through the link /p/x.so) is writable by
// others (mode 0777); run chmod o-w /w") or kIo ("cannot open: No such file or
// directory"); callers add which file it was (refusal()). With rules.strict off it opens
// the path as the kernel resolves it and checks nothing.
Expected<TrustedFile> openTrusted(const std::filesystem::path& path, const TrustRules& rules);

// Checks the mode and owner of an opened file. Errors are kUntrusted (kIo when it cannot
// be examined) and say, e.g., "file is writable by others (mode 0666); run chmod o-w F".
Status checkOpenedFile(int fd, const std::filesystem::path& file, const TrustRules& rules);
// Checks the mode and owner of directory `dir` itself; `what` names it in messages
// ("plugin directory", "package directory").
Status checkDirectory(const std::filesystem::path& dir, const TrustRules& rules,
                      std::string_view what = "directory");
// Checks every directory above `path` up to the root and every directory a link on the way
// leads through (as openTrusted() does, without checking `path` itself). Messages name the directory: "directory /srv above it
// is writable by others (mode 0777); run chmod o-w /srv".
Status checkDirectoriesAbove(const std::filesystem::path& path, const TrustRules& rules);
// A file that becomes code: openTrusted(), discarding the descriptor. Prefer openTrusted()
// and reading from its descriptor wherever the caller opens the file itself.
Status checkFile(const std::filesystem::path& file, const TrustRules& rules);
// A directory that becomes code (a Python package, an image directory): the directory,
// every directory above it and everything below it. Entries that are symbolic links are
// checked where they lead, without descending into linked directories.
Status checkTree(const std::filesystem::path& dir, const TrustRules& rules,
                 std::string_view what = "directory");

// `st` as the refusal of `file`: "FILE: refused: <rule>; <fix>", with the same code; Ok
// stays Ok.
Status refusal(const std::filesystem::path& file, Status st);

}  // namespace plugboard::host

#endif  // PLUGBOARD_HOST_TRUST_H_

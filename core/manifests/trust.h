// core/manifests/trust.h: which plugin files the runtime is willing to load.
//
// Loading a .so runs its code, so, like sshd's StrictModes, the runtime refuses a plugin
// file or plugin directory that is writable by group or others, or owned by a user other
// than root or the runtime's own user; and a plugin pinned to a SHA-256 digest whose file
// has another digest. Checks are made on the opened file descriptor, so a path swapped
// after the check cannot slip another file in. Every refusal says which rule failed and
// how to fix it. Value types and free functions; thread-safe.
#ifndef PLUGBOARD_CORE_MANIFESTS_TRUST_H_
#define PLUGBOARD_CORE_MANIFESTS_TRUST_H_

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/base/expected.h"

namespace plugboard::core {

struct TrustPolicy {
  // Check modes and owners. Off only when the operator says so.
  bool strict = true;
  // Owners besides root and the runtime's own user.
  std::vector<uid_t> extra_owners;
  // Lower-cased "name" or "name@version" -> lower-case hex SHA-256 of the plugin file.
  std::map<std::string, std::string> pins;
};

// Checks the mode and owner of an opened plugin file. `file` names it in messages, which
// say what is wrong and how to fix it; the caller adds where. Errors are kUntrusted (or
// kIo when the file cannot be examined).
Status checkFileTrust(int fd, const std::filesystem::path& file, const TrustPolicy& policy);
// Checks the mode and owner of a plugin directory.
Status checkDirectoryTrust(const std::filesystem::path& dir, const TrustPolicy& policy);
// Checks a pin for plugin `name` at `version`, if the policy has one.
Status checkPin(int fd, const std::string& name, const std::string& version,
                const std::filesystem::path& file, const TrustPolicy& policy);

// Lower-case hex SHA-256 of everything readable from `fd` (read with pread from 0).
Expected<std::string> sha256Hex(int fd);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_MANIFESTS_TRUST_H_

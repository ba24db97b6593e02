// core/manifests/trust.h: which files the runtime is willing to turn into code.
//
// Loading a .so runs its code, so, like sshd's StrictModes, the runtime refuses a plugin
// file or plugin directory that is writable by group or others, or owned by a user other
// than root or the runtime's own user, or below such a directory; and a plugin pinned to
// a SHA-256 digest whose file has another digest. The rules themselves are the host kit's
// (plugboard/host/trust.h), which deployers apply to the files only they know of; this
// header adds the configured policy (with pins) and the runtime's own files. Checks are
// made on the opened file descriptor, so a path swapped after the check cannot slip
// another file in. Every refusal says which rule failed and how to fix it. Value types
// and free functions; thread-safe.
#ifndef PLUGBOARD_CORE_MANIFESTS_TRUST_H_
#define PLUGBOARD_CORE_MANIFESTS_TRUST_H_

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/base/expected.h"
#include "plugboard/host/trust.h"

namespace plugboard::core {

struct TrustPolicy {
  // Check modes and owners. Off only when the operator says so.
  bool strict = true;
  // Owners besides root and the runtime's own user.
  std::vector<uid_t> extra_owners;
  // Lower-cased "name" or "name@version" -> lower-case hex SHA-256 of the plugin file.
  std::map<std::string, std::string> pins;
  using Pin = std::map<std::string, std::string>::value_type;

  // The rules without the pins, as the host kit and deployers take them.
  host::TrustRules rules() const { return {strict, extra_owners}; }
};

// Checks the mode and owner of an opened plugin file. `file` names it in messages, which
// say what is wrong and how to fix it; the caller adds where. Errors are kUntrusted (or
// kIo when the file cannot be examined).
Status checkFileTrust(int fd, const std::filesystem::path& file, const TrustPolicy& policy);
// Checks the mode and owner of a plugin directory and of every directory above it.
Status checkDirectoryTrust(const std::filesystem::path& dir, const TrustPolicy& policy);
// Reads a file that the runtime turns into code or into decisions about code (a registry
// file, the configuration file) after checking it, and every directory above it, on its
// opened descriptor. Errors say "FILE: refused: <rule>; <fix>" or why it cannot be read;
// `what` names the file in the latter ("registry file").
Expected<std::string> readTrustedFile(const std::filesystem::path& file, const TrustPolicy& policy,
                                      const std::string& what);
// The pin for plugin `name` at `version` (name@version first, then the name), or nullptr.
const TrustPolicy::Pin* findPin(const std::string& name, const std::string& version,
                                const TrustPolicy& policy);
// Checks a pin for plugin `name` at `version`, if the policy has one.
Status checkPin(int fd, const std::string& name, const std::string& version,
                const std::filesystem::path& file, const TrustPolicy& policy);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_MANIFESTS_TRUST_H_

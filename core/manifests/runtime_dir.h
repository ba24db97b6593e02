// core/manifests/runtime_dir.h: the private directory that holds `serve`'s plugin copies,
// and the clean-up of those left behind by runs that could not remove theirs.
//
// A runtime directory is `<parent>/plugboard-runtime-XXXXXX`, mode 0700, with a file
// `.owner` that records who made it: the process id, the process's start time (so that a
// reused pid is not taken for the owner), the boot id and the pid namespace. A run that
// ends normally removes its directory; one killed (SIGKILL, a crash, power loss) cannot,
// so each new runtime directory is made after removing the ones whose owner is gone.
//
// A directory is removed only when all of these hold: it is a real directory (not a
// link) owned by this process's user, its `.owner` file could be read, and its owner is
// known to be gone: another boot, or, in this pid namespace, no process with that id and
// start time. A directory of another user, of another pid namespace (a container sharing
// the temp directory), without a readable `.owner` (made by an older version, or being
// made right now), or of a live process is left alone.
//
// The record and the rule are the host kit's (plugboard/host/owner.h), shared with the
// deployers' directories and containers. Thread-safety: free functions; concurrent runs may clean
// the same parent at once (a directory that another run removed first is skipped).
#ifndef PLUGBOARD_CORE_MANIFESTS_RUNTIME_DIR_H_
#define PLUGBOARD_CORE_MANIFESTS_RUNTIME_DIR_H_

#include <filesystem>
#include <vector>

#include "core/base/expected.h"

namespace plugboard::core {

// Makes a new runtime directory under `parent` and writes its `.owner` file.
Expected<std::filesystem::path> makeRuntimeDir(const std::filesystem::path& parent);

// Removes the runtime directories under `parent` whose owner is gone (see above) and
// returns them.
std::vector<std::filesystem::path> removeDeadRuntimeDirs(const std::filesystem::path& parent);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_MANIFESTS_RUNTIME_DIR_H_

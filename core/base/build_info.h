// core/base/build_info.h: what this build of plugboard is: its version (the CMake project's),
// the compiler, the build type and the git commit of the source tree when CMake was
// configured (empty when unknown: not a git checkout, or configured with
// -DPLUGBOARD_COMMIT=). `plugboard version`, serve's status page and /metrics'
// plugboard_build_info all read it from here.
//
// The commit is read once, at configure time, so that a build does not depend on the state
// of .git (a new commit does not rebuild anything until CMake configures again).
//
// Thread-safety: immutable data.
#ifndef PLUGBOARD_CORE_BASE_BUILD_INFO_H_
#define PLUGBOARD_CORE_BASE_BUILD_INFO_H_

#include <string>
#include <string_view>

namespace plugboard::core {

struct BuildInfo {
  std::string_view version;     // "0.1.0"
  std::string_view compiler;    // "GNU 12.2.0"
  std::string_view build_type;  // "RelWithDebInfo", or "none"
  std::string_view commit;      // "3f2a9c1e0b7d", or "" when unknown
};

const BuildInfo& buildInfo();

// "plugboard 0.1.0 (commit 3f2a9c1e0b7d, GNU 12.2.0, RelWithDebInfo)": one line, as
// `plugboard --version` prints it.
std::string buildInfoLine();

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_BASE_BUILD_INFO_H_

// tests/support/sdk_project.h: the SDK as a third party uses it: this build installed into
// a prefix with `cmake --install`, and projects outside the tree configured and built
// against that prefix with find_package(plugboard). Free functions; each runs cmake as a
// child process and waits for it.
#ifndef PLUGBOARD_TESTS_SUPPORT_SDK_PROJECT_H_
#define PLUGBOARD_TESTS_SUPPORT_SDK_PROJECT_H_

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/paths.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {

// Installs this build (the CLI, deployers, SDK, host kit, CMake package) into `prefix`.
inline RunResult installBuild(const std::filesystem::path& prefix) {
  return run({PLUGBOARD_CMAKE, "--install", buildDir().string(), "--prefix", prefix.string()});
}

// Configures the project in `source` into `build` against the installation in `prefix`
// (with `flags` added to the compiler's), then builds it; the result of the first step
// that failed, else of the build.
inline RunResult buildProject(const std::filesystem::path& source,
                              const std::filesystem::path& build,
                              const std::filesystem::path& prefix, const std::string& flags = "") {
  std::vector<std::string> configure = {PLUGBOARD_CMAKE, "-S", source.string(), "-B",
                                        build.string()};
  configure.insert(configure.end(), {"-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"});
  configure.push_back("-DCMAKE_PREFIX_PATH=" + prefix.string());
  if (!flags.empty()) configure.push_back("-DCMAKE_CXX_FLAGS=" + flags);
  RunResult configured = run(configure);
  if (configured.exit_code != 0) return configured;
  return run({PLUGBOARD_CMAKE, "--build", build.string()});
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_SDK_PROJECT_H_

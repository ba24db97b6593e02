// tests/support/podman.h: what the tests of container-running deployers share: the
// containers a filter names that still exist, and the command line of `plugboard run` for a
// workflow beside a registry. Thread-safe: no state.
#ifndef PLUGBOARD_TESTS_SUPPORT_PODMAN_H_
#define PLUGBOARD_TESTS_SUPPORT_PODMAN_H_

#include <string>
#include <vector>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {

// The names of the containers `filter` (podman ps --filter) names, running or not, one per
// line; the failure itself when podman cannot say.
inline std::string containersLeft(const std::string& filter) {
  auto r = run({"podman", "ps", "--all", "--filter", filter, "--format", "{{.Names}}"});
  return r.exit_code == 0 ? r.out : "podman ps failed: " + r.err;
}

// Whether rootful podman gives each of plugboard's containers a user namespace of its own
// here (/etc/subuid and /etc/subgid name user "containers": docs/security.md).
inline bool containersGetUserNamespaces() {
  const auto named = [](const char* file) {
    return readFile(file).find("containers:") != std::string::npos;
  };
  return named("/etc/subuid") && named("/etc/subgid");
}

// `plugboard run` of `workflow` (written to wf.toml in `dir`) on the bundled plugins, with
// the registry `dir`/registry.toml and JSON output, then `more`.
inline std::vector<std::string> runWithRegistry(const TempDir& dir, const std::string& workflow,
                                                const std::vector<std::string>& more = {}) {
  std::vector<std::string> argv = {binary().string(),
                                   "run",
                                   dir.write("wf.toml", workflow),
                                   "--plugins",
                                   pluginDir().string(),
                                   "--registry",
                                   (dir.path() / "registry.toml").string(),
                                   "--output",
                                   "json"};
  argv.insert(argv.end(), more.begin(), more.end());
  return argv;
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_PODMAN_H_

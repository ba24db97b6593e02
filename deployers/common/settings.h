// deployers/common/settings.h: the options of a deployer of child processes
// (docs/deployers.md), and finding plugboard-host. Shared by the process, python and
// container deployers (library plugboard_deployer_common).
//
// Settings holds one step's options: the deployer's config gives defaults, a step's
// options override them (applyOptions). Free functions; thread-safe, except that a
// Settings must not be changed while another thread reads it.
#ifndef PLUGBOARD_DEPLOYERS_COMMON_SETTINGS_H_
#define PLUGBOARD_DEPLOYERS_COMMON_SETTINGS_H_

#include <sys/resource.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <plugboard/host/protocol.h>
#include <plugboard/sdk.hpp>

// The manifest "config" entries of the options every deployer of child processes takes
// (parsed by applyOptions), for concatenation into its PLUGBOARD_DEPLOYER manifest.
#define PLUGBOARD_CHILD_PROCESS_OPTIONS                                                                     \
  R"("memory": {"type": "size", "step": true, "description": "address-space limit of the child, RLIMIT_AS, e.g. 512M"},)" \
  R"("cpu_time": {"type": "duration", "step": true, "description": "CPU time the child may use in its whole life, )"      \
  R"(RLIMIT_CPU in seconds rounded up; past it the child is killed and the next call starts a new one"},)"  \
  R"("open_files": {"type": "integer", "step": true, "description": "limit on the child's open file descriptors, )"       \
  R"(RLIMIT_NOFILE"},)"                                                                                     \
  R"("cwd": {"type": "string", "description": "working directory of the child; default: the runtime's"},)"  \
  R"("cancel_grace": {"type": "duration", "step": true, "description": "how long a cancelled call may take to answer )"   \
  R"(before the child is killed; default 1s, unless the deployer's description says otherwise"},)"                                                            \
  R"("frame_limit": {"type": "size", "step": true, "description": "the most bytes one protocol message may hold, )"       \
  R"(in both directions; a larger result or request fails its call alone; default 16M"},)"                  \
  R"("restart_at_open_files": {"type": "integer", "step": true, "description": "the child is replaced, its calls )"       \
  R"(in flight finishing first, once it holds this many open descriptors, counted between calls"},)"        \
  R"("restart_at_threads": {"type": "integer", "step": true, "description": "the child is replaced, its calls in )"       \
  R"(flight finishing first, once it runs this many threads, counted between calls"},)"                     \
  R"("restart_after_calls": {"type": "integer", "step": true, "description": "the child is replaced, its calls in )"      \
  R"(flight finishing first, after it has been given this many calls"})"

namespace plugboard::deployer_common {

using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

struct Settings {
  std::string host;                   // empty: next to this module, else PATH
  std::optional<rlim_t> memory;       // RLIMIT_AS, bytes
  std::string memory_text;            // as the user wrote it
  std::optional<rlim_t> cpu_seconds;  // RLIMIT_CPU
  std::optional<rlim_t> open_files;   // RLIMIT_NOFILE
  std::map<std::string, std::string> env;
  std::string cwd;
  std::optional<Json> config;
  Millis cancel_grace{1000};
  Millis start_timeout{10000};
  std::size_t frame_limit = host::kDefaultFrameLimit;  // announced in the hello
  // Replace a child that holds this many descriptors or threads, or was given this many calls.
  std::optional<std::uint64_t> restart_at_open_files, restart_at_threads, restart_after_calls;
};

// Reads `options` over `s`: each key present replaces the value in `s`, except "env",
// whose variables are added to (or replace) those already there. Throws
// std::invalid_argument naming the option.
void applyOptions(Settings& s, const Json& options);

// plugboard-host where the build or an install puts it relative to this module:
// <build>/deployers/process.so and <build>/plugboard-host, or
// <prefix>/lib[/<arch>]/plugboard/deployers/process.so and <prefix>/bin/plugboard-host;
// else the first in PATH. Empty when there is none.
std::string defaultHost();

// The host to run: `option` (option 'host': a path, or a name looked up in PATH), else
// `fallback` (defaultHost()). Throws std::runtime_error when there is none.
std::string resolveHost(const std::string& option, const std::string& fallback);

}  // namespace plugboard::deployer_common

#endif  // PLUGBOARD_DEPLOYERS_COMMON_SETTINGS_H_

// core/runtime/config.h: the runtime's configuration file (TOML), documented key by key in
// docs/configuration.md.
//
// Every key is optional; an absent key keeps its default. An unknown key or a value of the
// wrong type is an error that names the key, the file and the line. Command-line flags
// override what the file says (the CLI applies them on top, in one place: settings() in
// tools/plugboard/cli.cc). Value type.
#ifndef PLUGBOARD_CORE_RUNTIME_CONFIG_H_
#define PLUGBOARD_CORE_RUNTIME_CONFIG_H_

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/defaults.h"
#include "core/base/duration.h"
#include "core/base/expected.h"
#include "core/launch/placement.h"
#include "core/launch/registry.h"
#include "core/manifests/trust.h"
#include "core/serving/http_server.h"

namespace plugboard::core {

struct Config {
  std::vector<std::filesystem::path> plugin_dirs;
  bool watch = defaults::kWatch;
  Millis reload_debounce = defaults::kReloadDebounce;  // serve: quiet time before a change applies
  // What the file says of serving, and what every command shares with serve: listen,
  // workers (server.threads), default_timeout, poll_interval, reply_deadline,
  // grace_period, body_limit, poll_unknown, max_connections. Its token is read from
  // `token_file` when serve starts.
  ServerOptions server;
  std::filesystem::path token_file;  // empty: no authentication
  std::size_t args_limit = defaults::kArgsLimit;  // run: a step's args after substitution
  std::size_t max_nodes = defaults::kMaxNodes;    // run: the nodes a run makes at most
  std::string log_level{defaults::kLogLevel};
  std::string log_format{defaults::kLogFormat};  // or "json"
  TrustPolicy trust;
  std::unordered_map<std::string, int> priority;
  // Deployer modules: their directories (empty: the defaults next to the binary), their
  // options by deployer name ([deployers.NAME]), and the plugin registry file (optional).
  std::vector<std::filesystem::path> deployer_dirs;
  std::map<std::string, nlohmann::json> deployer_options;
  std::filesystem::path registry;
  // Plugins a command adds to the registry's (run: a workflow's executor plugins); kept
  // with the file's, or alone when there is no file.
  std::vector<RegistryEntry> extra_plugins;
  // [deploy]: the deployer (and its options) that runs a plugin of the plugin directories,
  // by lower-case plugin name, e.g. crashy = "process". Absent: the first deployer of
  // native plugins by priority (the in-process `native`).
  std::map<std::string, Placement> plugin_deploy;
  // [containment]: what a container may get (core/launch/placement.h, docs/security.md).
  ContainmentPolicy containment;
};

// The keys the file may hold, in the order error messages list them; the keys of a
// table with fixed keys are listed as "table.key" ("log.level").
std::vector<std::string> configKeys();

// Reads `file` after checking it, and every directory above it, against the default trust
// rules (its own [trust] cannot relax them). Relative plugin directories and token files
// are relative to the file's own directory.
Expected<Config> loadConfig(const std::filesystem::path& file);
Expected<Config> parseConfig(std::string_view text, const std::filesystem::path& file);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_RUNTIME_CONFIG_H_

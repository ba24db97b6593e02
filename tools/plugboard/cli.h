// tools/plugboard/cli.h: what the plugboard subcommands share.
//
// Each subcommand is a function taking its own arguments (without the command words) and
// returning the process exit status: kExitOk, kExitFailed (the work ran and failed) or
// kExitUsage (bad command line or bad input; nothing ran).
#ifndef PLUGBOARD_TOOLS_CLI_H_
#define PLUGBOARD_TOOLS_CLI_H_

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "core/catalog.h"
#include "core/config.h"
#include "core/deployer.h"
#include "core/registry_plugins.h"
#include "core/dispatcher.h"
#include "core/registry.h"
#include "core/step_plugins.h"
#include "core/workflow.h"

namespace plugboard::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

using Args = std::vector<std::string>;

int cmdPluginsList(const Args& args);
int cmdInspect(const Args& args);
int cmdCall(const Args& args);
int cmdRun(const Args& args);
int cmdExec(const Args& args);
int cmdValidate(const Args& args);
int cmdServe(const Args& args);

// Options every command accepts: --help, --log-level.
boost::program_options::options_description commonOptions();

// Parses `args` against `options` (positional names in `positional`). On --help prints
// `usage` and the options and returns kExitOk through `exit_code`; on a parse error prints
// it and returns kExitUsage. Returns true when the command should go on.
bool parseArgs(const Args& args, const std::string& usage,
               const boost::program_options::options_description& options,
               const boost::program_options::positional_options_description& positional,
               boost::program_options::variables_map& vm, int& exit_code);

// Adds --config FILE and --plugins DIR (repeatable) to `options`.
void addPluginDirsOption(boost::program_options::options_description& options);
// Adds --param K=V (repeatable) to `options`.
void addParamOption(boost::program_options::options_description& options);
// Adds --priority NAME=N (repeatable) to `options`.
void addPriorityOption(boost::program_options::options_description& options);
// The --param values; prints the problem and returns nullopt for a malformed one.
std::optional<std::map<std::string, std::string>> params(
    const boost::program_options::variables_map& vm);

// A default value as --help states it: durations as users write them ("5m").
std::string defaultText(core::Millis value);
std::string defaultText(std::string_view value);
std::string defaultText(std::size_t value);
std::string defaultText(int value);
std::string defaultText(bool value);
// The --help text of a flag that overrides config key `key`:
// "<what> (default: the config's <key>, else <default_text>)".
std::string configHelp(const std::string& what, const std::string& key,
                       const std::string& default_text);

// The runtime's settings: the --config file if given (else the defaults), with the flags
// given on top of it: --plugins, --priority, --timeout or --default-timeout,
// --poll-interval, --log-level. Plugin directories come from --plugins, else the file,
// else $PLUGBOARD_PLUGINS (colon-separated). Prints what is wrong and returns nullopt
// on an error, or when there is no plugin directory at all.
std::optional<core::Config> settings(const boost::program_options::variables_map& vm);

// A workflow ready to run: parsed, inputs resolved, checked against the catalog.
struct PreparedWorkflow {
  core::Workflow workflow;
  core::Json inputs;
};
// Loads and checks `file`, printing every problem on its own line to stderr.
// With `step_plugins`, each step is resolved to its deployer and artifact too.
std::optional<PreparedWorkflow> prepareWorkflow(const std::string& file,
                                                const core::Catalog& catalog,
                                                const std::map<std::string, std::string>& params,
                                                const core::StepPlugins* step_plugins = nullptr);

// The deployer directories found next to the binary (build tree) or under its prefix.
std::vector<std::filesystem::path> defaultDeployerDirs();
std::vector<std::filesystem::path> splitPath(const std::string& colon_separated);

// The deployers of a run, the registry, and the step plugins that use them.
struct Deployment {
  std::shared_ptr<core::DeployerSet> deployers;
  std::shared_ptr<core::Registry> registry;  // null without a registry file
  std::shared_ptr<core::StepPlugins> steps;
};
// Scans the configured deployer directories (logging refused files) and loads the
// registry. Prints the problem and returns nullopt for a bad registry or options for a
// deployer that is not installed. `plugins` must outlive the result.
std::optional<Deployment> setUpDeployers(const core::Config& config, const core::Catalog& plugins);
// Opens plugin-directory plugins through the deployer the config's [deploy] names for
// them, else the highest-priority deployer of native plugins.
// `registry_plugins` (may be null): serve's plugins from the registry, already started.
core::PluginOpener pluginOpener(std::shared_ptr<core::DeployerSet> deployers, const core::Config& config,
                                std::shared_ptr<core::RegistryPlugins> registry_plugins = nullptr);

// Scans the configured plugin directories with the configured trust rules, logging each
// refused file as a warning.
core::Catalog scanPlugins(const core::Config& config);

using core::join;

// Sets up logging to stderr at `level` (trace, debug, info, warn, error, off), as text
// or as JSON lines (`format` "json").
bool configureLogging(const std::string& level, const std::string& format = "text");

}  // namespace plugboard::cli

#endif  // PLUGBOARD_TOOLS_CLI_H_

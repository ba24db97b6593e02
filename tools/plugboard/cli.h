// tools/plugboard/cli.h: what the plugboard subcommands share.
//
// Each subcommand is a function taking its own arguments (without the command words) and
// returning the process exit status: kExitOk, kExitFailed (the work ran and failed) or
// kExitUsage (bad command line or bad input; nothing ran).
#ifndef PLUGBOARD_TOOLS_CLI_H_
#define PLUGBOARD_TOOLS_CLI_H_

#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

#include "core/runtime/config.h"
#include "core/runtime/exports.h"
#include "core/runtime/runtime.h"

namespace plugboard::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

using Args = std::vector<std::string>;

// A command's options (without the common ones) and which of them are positional. Each
// command's options builder (xxxOptions) is listed in the table of commands.h, which
// --help, the man pages and the completion script read.
struct CommandOptions {
  boost::program_options::options_description options;
  boost::program_options::positional_options_description positional = {};
};

CommandOptions pluginsListOptions();
CommandOptions inspectOptions();
CommandOptions callOptions();
CommandOptions runOptions();
CommandOptions execOptions();
CommandOptions validateOptions();
CommandOptions serveOptions();
CommandOptions graphOptions();
CommandOptions newOptions();

int cmdPluginsList(const Args& args);
int cmdInspect(const Args& args);
int cmdCall(const Args& args);
int cmdRun(const Args& args);
int cmdExec(const Args& args);
int cmdValidate(const Args& args);
int cmdServe(const Args& args);
int cmdGraph(const Args& args);
int cmdNew(const Args& args);

// Options every command accepts: --help, --log-level.
boost::program_options::options_description commonOptions();
// `own` and the common options, as --help lists them.
boost::program_options::options_description withCommonOptions(
    const boost::program_options::options_description& own);

// Parses `args` against `options` (positional names in `positional`). On --help prints
// `usage` and the options and returns kExitOk through `exit_code`; on a parse error prints
// it and returns kExitUsage. Returns true when the command should go on. `operands` names
// the positional ones as the usage line does ("KIND NAME"): a missing one is said as
// "missing KIND", never by the option behind it.
bool parseArgs(const Args& args, const std::string& usage,
               const boost::program_options::options_description& options,
               const boost::program_options::positional_options_description& positional,
               boost::program_options::variables_map& vm, int& exit_code,
               std::string_view operands = "");

// Adds --config FILE and --plugins DIR (repeatable) to `options`.
void addPluginDirsOption(boost::program_options::options_description& options);
// Adds --param K=V (repeatable) to `options`.
void addParamOption(boost::program_options::options_description& options);
// Adds --priority NAME=N (repeatable) to `options`.
void addPriorityOption(boost::program_options::options_description& options);
// The --param values; prints the problem and returns nullopt for a malformed one.
std::optional<std::map<std::string, std::string>> params(
    const boost::program_options::variables_map& vm);
// The value of option --`name`, one of `choices` (the first is its default); prints the
// problem (with the nearest choice) and returns nullopt for any other. `shown`: what the
// message calls the option, for one filled by position ("KIND"); default --`name`.
std::optional<std::string> choice(const boost::program_options::variables_map& vm,
                                  const std::string& name,
                                  std::initializer_list<std::string_view> choices,
                                  std::string_view shown = "");

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
// given on top of it. This is the one place a flag overrides the file: --plugins,
// --deployers, --registry, --priority, --timeout or --default-timeout, --poll-interval,
// --log-level, and serve's --listen, --token-file, --workers, --body-limit,
// --max-connections, --poll-unknown, --no-watch, --grace-period, --reply-deadline (and
// --idle-timeout, which no key has). Plugin directories come from --plugins, else the file,
// else $PLUGBOARD_PLUGINS (colon-separated), else the system plugin directory when it
// exists (defaultPluginDirs). Prints what is wrong and returns nullopt on an error, or
// when there is no plugin directory at all and no registry either (a registry alone is a
// source of plugins).
// `need_plugin_dirs` false: no plugin directory is not an error (an Argo workflow of
// container templates, or of executor plugins only, needs none).
std::optional<core::Config> settings(const boost::program_options::variables_map& vm,
                                     bool need_plugin_dirs = true);

// The deployer directories found next to the binary (build tree) or under its prefix.
std::vector<std::filesystem::path> defaultDeployerDirs();
// The plugin directory installed with plugboard, <prefix>/lib/plugboard/plugins for the
// binary's <prefix>/bin, when it exists (core::defaults::kSystemPluginDir); else none.
std::vector<std::filesystem::path> defaultPluginDirs();
std::vector<std::filesystem::path> splitPath(const std::string& colon_separated);

// The runtime of a one-shot command (core/runtime/runtime.h) for `config`; prints the problem and
// returns null when it cannot be made (a plugin directory that cannot be read among them).
// `isolate_polls`: for exec, which answers a request as serve does (core::LaunchOptions).
std::unique_ptr<core::Runtime> openRuntime(const core::Config& config, bool isolate_polls = false);

// The end of a `run` that exits with `status`, for every workflow format. Calls abandoned
// past their deadline (`abandoned` of them) may still run plugin code that uses the runtime,
// the workflow and the engine's worker threads: then a warning goes to standard error (never
// standard output, which may hold the run's JSON), the deployers remove what those plugins
// would leave behind, and the process ends here without destroying them.
int endRun(core::Runtime& runtime, int status, int abandoned);

using core::join;

// Sets up logging to stderr at `level` (trace, debug, info, warn, error, off), as text
// or as JSON lines (`format` "json").
bool configureLogging(const std::string& level, const std::string& format = "text");

}  // namespace plugboard::cli

#endif  // PLUGBOARD_TOOLS_CLI_H_

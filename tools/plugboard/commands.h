// tools/plugboard/commands.h: the table of plugboard's commands, the one place their
// usage lines, summaries and options are written.
//
// `plugboard --help`, each command's --help, the man pages and the bash completion script
// are all made from this table (tools/plugboard/docs.cc writes the last two), so a flag
// added to a command's options builder appears in all of them. To add a command: write
// its options builder and its run function, declare both in cli.h, and add one entry to
// the table in commands.cc. An option's value name tells completion what to offer:
// "FILE" files, "DIR" directories, "a|b|c" those words (value_name() in the builder; --help
// shows it too); the option the operand fills completes like the operand. The table is
// immutable after static initialisation: safe to read from any thread.
#ifndef PLUGBOARD_TOOLS_COMMANDS_H_
#define PLUGBOARD_TOOLS_COMMANDS_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

#include "tools/plugboard/cli.h"

namespace plugboard::cli {

// What the operand of a command is, for completion: nothing, a file, or a plugin's name.
enum class Operand { kNone, kFile, kPluginName };

struct Command {
  std::string_view name;     // the words after "plugboard": "run", "plugins list"
  std::string_view operand;  // its operand as the command list shows it: "WORKFLOW", or ""
  Operand operand_kind;
  std::string_view summary;     // one line, lower case, no full stop
  std::string_view usage;       // what follows "plugboard <name>" in its usage line; lines
                                // separated by \n are alternative forms
  CommandOptions (*options)();  // its options (without the common ones) and positionals
  int (*run)(const Args& args);
};

// Every command, in the order `plugboard --help` lists them.
std::span<const Command> commands();
// The command named `name`, or null.
const Command* findCommand(std::string_view name);
// Every command's name ("run", "plugins list"), in the table's order.
std::vector<std::string> commandNames();
// The words that may follow "plugboard": each command's first word, once, and "version"
// and "help" (what "did you mean" compares an unknown first word with).
std::vector<std::string> firstWords();
// The second words of the commands whose first word is `first` ("list" for "plugins").
std::vector<std::string> subcommands(std::string_view first);

// "usage: plugboard <name> <usage>", one line per form of the usage.
std::string usageLine(const Command& command);
// Each form of the command's usage: the lines of Command::usage.
std::vector<std::string> usageForms(const Command& command);
// The text of `plugboard --help`: the usage, and every command with its summary.
std::string overview();

// Parses `args` for the command named `name` (which must be in the table), like parseArgs.
bool parseCommandArgs(const Args& args, std::string_view name,
                      boost::program_options::variables_map& vm, int& exit_code);

// `plugboard version` (also --version, -V): the version and build of this binary
// (core/base/build_info.h).
int cmdVersion(const Args& args);

// Hidden command `plugboard __docs DIR`: writes DIR/man1/*.1 (plugboard.1 and one page per
// command, plugboard-<words>.1) and the completion scripts DIR/completions/plugboard (bash),
// DIR/completions/_plugboard (zsh) and DIR/completions/plugboard.fish from the table.
int cmdDocs(const Args& args);

// Hidden command `plugboard __complete WHAT [ARGS]`: the words the completion scripts offer
// that only the binary can know, one a line, nothing (exit 0) when it cannot tell:
//   __complete plugins [--plugins DIR]... [--config F]  the plugins' names
//   __complete rpcs [NAME] [--plugins DIR]... [--config F]  the RPCs NAME provides (all
//                                                        the plugins' without NAME)
//   __complete params WORKFLOW                           the workflow's inputs, as "NAME="
int cmdComplete(const Args& args);

}  // namespace plugboard::cli

#endif  // PLUGBOARD_TOOLS_COMMANDS_H_

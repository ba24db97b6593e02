// tools/plugboard/completion.h: the completion scripts for bash, zsh and fish, written by
// `plugboard __docs` at build time from the table of commands (commands.h) and each
// command's options, and what they share with the man pages: each option as --help shows
// it. Words only the binary can know (plugin names, a plugin's RPCs, a workflow's inputs)
// the scripts ask `plugboard __complete` for (commands.h).
#ifndef PLUGBOARD_TOOLS_COMPLETION_H_
#define PLUGBOARD_TOOLS_COMPLETION_H_

#include <string>
#include <vector>

#include "tools/plugboard/commands.h"

namespace plugboard::cli {

// One option as --help shows it.
struct Flag {
  std::string long_name;   // "--output"
  std::string short_name;  // "-o", or ""
  std::string parameter;   // "text|json (=text)", or "" for a flag without a value
  std::string value_name;  // "text|json", "FILE", "DIR", "RPC", "NAME=VALUE", "arg", or ""
  std::string description;
};

// The command's options and the common ones, in --help's order.
std::vector<Flag> flags(const Command& command);

// What a completion offers for the value of an option, from its value name (commands.h).
enum class ValueKind {
  kNone,     // the option takes no value
  kDir,      // "DIR"
  kFile,     // "FILE", or the option a file operand fills
  kChoices,  // "a|b|c"
  kPlugin,   // the option a plugin-name operand fills
  kRpc,      // "RPC": an RPC of the plugin named on the line
  kParam,    // "NAME=VALUE": an input of the workflow named on the line
  kOther,    // anything else: nothing to offer
};
ValueKind valueKind(const Command& command, const Flag& flag);

std::string bashCompletion();
std::string zshCompletion();
std::string fishCompletion();

}  // namespace plugboard::cli

#endif  // PLUGBOARD_TOOLS_COMPLETION_H_

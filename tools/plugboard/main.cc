// plugboard: the command-line front end of the runtime. The commands, their usage and their
// options are the table in tools/plugboard/commands.cc.
#include <iostream>
#include <string>

#include "tools/plugboard/cli.h"
#include "tools/plugboard/commands.h"

int main(int argc, char** argv) {
  using namespace plugboard::cli;
  Args args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << overview() << "\n";
    return args.empty() ? kExitUsage : kExitOk;
  }
  if (args[0] == "--version" || args[0] == "-V" || args[0] == "version") {
    return cmdVersion(Args(args.begin() + 1, args.end()));
  }
  // Hidden: the man pages and the completion scripts, made at build time
  // (tools/CMakeLists.txt), and the words those scripts ask the binary for.
  if (args[0] == "__docs") return cmdDocs(Args(args.begin() + 1, args.end()));
  if (args[0] == "__complete") return cmdComplete(Args(args.begin() + 1, args.end()));
  // A command is one or two words ("run", "plugins list"); the longest match wins.
  if (args.size() >= 2) {
    if (const Command* command = findCommand(args[0] + " " + args[1])) {
      return command->run(Args(args.begin() + 2, args.end()));
    }
  }
  if (const Command* command = findCommand(args[0])) {
    return command->run(Args(args.begin() + 1, args.end()));
  }
  // The first word of a two-word command alone: its --help, or what it needs.
  if (const auto seconds = subcommands(args[0]); !seconds.empty()) {
    if (args.size() >= 2 && (args[1] == "--help" || args[1] == "-h")) {
      return findCommand(args[0] + " " + seconds.front())->run(Args(args.begin() + 1, args.end()));
    }
    if (args.size() < 2 || args[1].starts_with("-")) {
      std::cerr << "plugboard: '" << args[0]
                << "' needs a subcommand: " << plugboard::core::join(seconds, ", ") << "\n";
    } else {
      std::cerr << "plugboard: unknown command '" << args[0] << " " << args[1] << "'"
                << plugboard::core::didYouMean(args[0] + " " + args[1], commandNames())
                << " (subcommands of '" << args[0] << "': " << plugboard::core::join(seconds, ", ")
                << ")\n";
    }
    return kExitUsage;
  }
  // "plugin list" is nearest to "plugins list", "rnu" to "run".
  std::string given = args[0];
  std::string suggestion;
  if (args.size() >= 2 && !args[1].starts_with("-")) {
    suggestion = plugboard::core::didYouMean(args[0] + " " + args[1], commandNames());
    if (!suggestion.empty()) given += " " + args[1];
  }
  if (suggestion.empty()) suggestion = plugboard::core::didYouMean(args[0], firstWords());
  std::cerr << "plugboard: unknown command '" << given << "'" << suggestion << "\n";
  if (suggestion.empty()) std::cerr << overview() << "\n";
  return kExitUsage;
}

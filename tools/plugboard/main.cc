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
  // Hidden: the man pages and the completion script, made at build time (tools/CMakeLists.txt).
  if (args[0] == "__docs") return cmdDocs(Args(args.begin() + 1, args.end()));
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
  for (const auto& c : commands()) {
    if (!c.name.starts_with(args[0] + " ")) continue;
    if (args.size() >= 2 && (args[1] == "--help" || args[1] == "-h")) {
      return c.run(Args(args.begin() + 1, args.end()));
    }
    std::cerr << "plugboard: '" << args[0] << "' needs a subcommand: " << c.name << "\n";
    return kExitUsage;
  }
  std::cerr << "plugboard: unknown command '" << args[0] << "'\n" << overview() << "\n";
  return kExitUsage;
}

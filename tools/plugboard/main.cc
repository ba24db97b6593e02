// plugboard: the command-line front end of the runtime.
#include <iostream>
#include <string>

#include "tools/plugboard/cli.h"

namespace {

constexpr const char* kUsage = R"(usage: plugboard <command> [options]

Commands:
  plugins list   list the plugins in plugin directories, read without loading them
  inspect FILE   show a plugin file's manifest (read without loading; --load to load it)
  run WORKFLOW   run a workflow file (TOML) on the installed plugins
  validate WF    check a workflow file without loading any plugin
  graph WF       a workflow's step graph as Graphviz DOT or Mermaid
  exec           answer one Argo ExecuteTemplateArgs (stdin) with an ExecuteTemplateReply
  serve          serve Argo's executor-plugin HTTP protocol and the runtime's API
  call NAME      call one plugin directly with JSON args
  new KIND NAME  start a new project: KIND is plugin (C++ or Python) or deployer

Run 'plugboard <command> --help' for a command's options.)";

}  // namespace

int main(int argc, char** argv) {
  using namespace plugboard::cli;
  Args args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage << "\n";
    return args.empty() ? kExitUsage : kExitOk;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  if (command == "plugins") {
    if (!args.empty() && args[0] == "list") {
      args.erase(args.begin());
      return cmdPluginsList(args);
    }
    if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) return cmdPluginsList(args);
    std::cerr << "plugboard: 'plugins' needs a subcommand: plugins list\n";
    return kExitUsage;
  }
  if (command == "inspect") return cmdInspect(args);
  if (command == "call") return cmdCall(args);
  if (command == "run") return cmdRun(args);
  if (command == "validate") return cmdValidate(args);
  if (command == "graph") return cmdGraph(args);
  if (command == "exec") return cmdExec(args);
  if (command == "serve") return cmdServe(args);
  if (command == "new") return cmdNew(args);
  std::cerr << "plugboard: unknown command '" << command << "'\n" << kUsage << "\n";
  return kExitUsage;
}

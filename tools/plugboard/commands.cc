#include "tools/plugboard/commands.h"

#include <algorithm>
#include <iostream>

namespace plugboard::cli {
namespace po = boost::program_options;

namespace {

// One entry per command; `plugboard --help` lists them in this order.
const Command kCommands[] = {
    {"plugins list", "", Operand::kNone,
     "list the plugins in plugin directories, read without loading them", "--plugins DIR [--json]",
     pluginsListOptions, cmdPluginsList},
    {"inspect", "FILE", Operand::kFile,
     "show a plugin file's manifest (read without loading; --load to load it)",
     "FILE [--json] [--load]", inspectOptions, cmdInspect},
    {"run", "WORKFLOW", Operand::kFile, "run a workflow file (TOML) on the installed plugins",
     "WORKFLOW --plugins DIR [--param K=V]... [--output text|json]", runOptions, cmdRun},
    {"validate", "WORKFLOW", Operand::kFile, "check a workflow file without loading any plugin",
     "WORKFLOW --plugins DIR [--param K=V]...", validateOptions, cmdValidate},
    {"graph", "WORKFLOW", Operand::kFile, "a workflow's step graph as Graphviz DOT or Mermaid",
     "WORKFLOW --plugins DIR [--format dot|mermaid] [--run-output FILE] [--param K=V]...",
     graphOptions, cmdGraph},
    {"exec", "", Operand::kNone,
     "answer one Argo ExecuteTemplateArgs (stdin) with an ExecuteTemplateReply",
     "--plugins DIR < ExecuteTemplateArgs.json", execOptions, cmdExec},
    {"serve", "", Operand::kNone,
     "serve Argo's executor-plugin HTTP protocol and the runtime's API",
     "--plugins DIR [--listen HOST:PORT] [--token-file F]", serveOptions, cmdServe},
    {"call", "NAME", Operand::kPluginName, "call one plugin directly with JSON args",
     "NAME[@VERSION] --plugins DIR [--rpc RPC] [--args JSON | --args-file F]", callOptions,
     cmdCall},
    {"new", "KIND NAME", Operand::kNone,
     "start a new project: KIND is plugin (C++ or Python) or deployer",
     "plugin NAME [--lang cpp|python] [--dir DIR]\ndeployer NAME [--dir DIR]", newOptions, cmdNew},
};

}  // namespace

std::span<const Command> commands() { return kCommands; }

const Command* findCommand(std::string_view name) {
  for (const auto& command : kCommands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

std::vector<std::string> commandNames() {
  std::vector<std::string> names;
  for (const auto& command : kCommands) names.emplace_back(command.name);
  return names;
}

std::vector<std::string> firstWords() {
  std::vector<std::string> words;
  for (const auto& command : kCommands) {
    std::string first(command.name.substr(0, command.name.find(' ')));
    if (std::find(words.begin(), words.end(), first) == words.end()) words.push_back(first);
  }
  words.insert(words.end(), {"version", "help"});
  return words;
}

std::vector<std::string> subcommands(std::string_view first) {
  std::vector<std::string> words;
  for (const auto& command : kCommands) {
    const auto space = command.name.find(' ');
    if (space != std::string_view::npos && command.name.substr(0, space) == first)
      words.emplace_back(command.name.substr(space + 1));
  }
  return words;
}

int cmdVersion(const Args& args) {
  if (!args.empty()) {
    std::cerr << "plugboard: 'version' takes no arguments\nusage: plugboard version\n";
    return kExitUsage;
  }
  std::cout << core::buildInfoLine() << "\n";
  return kExitOk;
}

std::vector<std::string> usageForms(const Command& command) {
  std::vector<std::string> forms;
  std::string_view rest = command.usage;
  for (auto end = rest.find('\n'); end != std::string_view::npos; end = rest.find('\n')) {
    forms.emplace_back(rest.substr(0, end));
    rest.remove_prefix(end + 1);
  }
  forms.emplace_back(rest);
  return forms;
}

std::string usageLine(const Command& command) {
  std::string text;
  for (const auto& form : usageForms(command)) {
    text.append(text.empty() ? "usage: " : "\n       ").append("plugboard ");
    text.append(command.name).append(" ").append(form);
  }
  return text;
}

std::string overview() {
  std::string text = "usage: plugboard <command> [options]\n\nCommands:\n";
  std::size_t width = 0;
  auto head = [](const Command& c) {
    std::string text(c.name);
    if (!c.operand.empty()) text.append(" ").append(c.operand);
    return text;
  };
  for (const auto& command : kCommands) width = std::max(width, head(command).size());
  for (const auto& command : kCommands) {
    const std::string h = head(command);
    text += "  " + h + std::string(width - h.size() + 3, ' ') + std::string(command.summary) + "\n";
  }
  return text +
         "\nRun 'plugboard <command> --help' for a command's options, 'plugboard --version' for "
         "the version.";
}

bool parseCommandArgs(const Args& args, std::string_view name, po::variables_map& vm,
                      int& exit_code) {
  const Command* command = findCommand(name);
  if (command == nullptr) {  // a command missing from the table is a bug, not bad input
    std::cerr << "plugboard: '" << name << "' is not in the table of commands\n";
    exit_code = kExitFailed;
    return false;
  }
  const CommandOptions own = command->options();
  return parseArgs(args, usageLine(*command), own.options, own.positional, vm, exit_code,
                   command->operand);
}

}  // namespace plugboard::cli

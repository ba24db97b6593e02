// plugboard __complete WHAT WORD...: the words the completion scripts (tools/plugboard/docs.cc)
// offer that only the binary knows: plugin names, a plugin's RPCs, a workflow's inputs.
// WORDs are the command line after "plugboard" up to the word being completed; they are read
// with the command's own options, so --plugins, -p, --config and the operand mean here what
// they mean to the command. Prints nothing when it cannot tell (never an error: a shell
// shows none of it).
#include <iostream>
#include <set>

#include "core/runtime/exports.h"
#include "tools/plugboard/cli.h"
#include "tools/plugboard/commands.h"

namespace plugboard::cli {
namespace po = boost::program_options;

namespace {

// The options of the command `words` start with, read from the words after it. The last
// word may be an option whose value is being completed: what does not parse loses its last
// word until it does.
std::optional<po::variables_map> readLine(Args words) {
  const Command* command = nullptr;
  std::size_t used = 0;
  if (words.size() >= 2) {
    command = findCommand(words[0] + " " + words[1]);
    used = 2;
  }
  if (command == nullptr && !words.empty()) {
    command = findCommand(words[0]);
    used = 1;
  }
  if (command == nullptr) return std::nullopt;
  const CommandOptions own = command->options();
  const po::options_description all = withCommonOptions(own.options);
  Args rest(words.begin() + static_cast<std::ptrdiff_t>(used), words.end());
  for (;;) {
    try {
      po::variables_map vm;
      po::store(po::command_line_parser(rest).options(all).positional(own.positional).run(), vm);
      return vm;
    } catch (const po::error&) {
      if (rest.empty()) return std::nullopt;
      rest.pop_back();
    }
  }
}

// The plugins the command line's plugin directories hold, read without loading.
std::optional<core::Catalog> catalogOf(const po::variables_map& vm) {
  auto config = settings(vm, false);
  if (!config || config->plugin_dirs.empty()) return std::nullopt;
  return core::Catalog::scan(config->plugin_dirs, config->trust);
}

std::set<std::string> inputsOf(const std::string& file) {
  std::set<std::string> names;
  if (core::isTomlWorkflow(file)) {
    const auto loaded = core::loadWorkflow(file);
    if (loaded.workflow) {
      for (const auto& input : loaded.workflow->inputs) names.insert(input.name);
    }
    return names;
  }
  const auto loaded = core::loadModel(file);
  if (loaded.model) {
    for (const auto& parameter : loaded.model->parameters) names.insert(parameter.name);
  }
  return names;
}

}  // namespace

int cmdComplete(const Args& args) {
  if (args.empty()) return kExitUsage;
  const std::string what = args[0];
  // Nothing the runtime logs may reach the shell.
  configureLogging("off");
  const auto vm = readLine(Args(args.begin() + 1, args.end()));
  if (!vm) return kExitOk;
  std::set<std::string> words;
  if (what == "plugins" || what == "rpcs") {
    const auto catalog = catalogOf(*vm);
    if (!catalog) return kExitOk;
    const std::string plugin =
        vm->count("plugin") ? vm->at("plugin").as<std::string>() : std::string();
    const std::string name = plugin.substr(0, plugin.find('@'));
    for (const auto& e : catalog->entries()) {
      if (what == "plugins") {
        words.insert(e.manifest.name);
      } else if (name.empty() || e.manifest.name == name) {
        words.insert(e.manifest.provides.begin(), e.manifest.provides.end());
      }
    }
  } else if (what == "params") {
    if (!vm->count("workflow")) return kExitOk;
    for (const auto& name : inputsOf(vm->at("workflow").as<std::string>()))
      words.insert(name + "=");
  } else {
    return kExitUsage;
  }
  for (const auto& word : words) std::cout << word << "\n";
  return kExitOk;
}

}  // namespace plugboard::cli

// plugboard call NAME: loads one plugin and calls it once with JSON args.
#include <fstream>
#include <iostream>
#include <sstream>

#include <spdlog/spdlog.h>

#include <plugboard/host/json_text.h>

#include "core/runtime/exports.h"
#include "tools/plugboard/cli.h"
#include "tools/plugboard/commands.h"

namespace plugboard::cli {
namespace po = boost::program_options;

namespace {

core::Expected<core::Json> readArgs(const po::variables_map& vm) {
  std::string text = "{}", origin = "--args";
  if (vm.count("args")) text = vm["args"].as<std::string>();
  if (vm.count("args-file")) {
    origin = vm["args-file"].as<std::string>();
    auto read = core::readTextFile(origin, "args file");
    if (!read) return read.error();
    text = std::move(*read);
  }
  auto args = host::parseJsonText(text);
  if (!args) return core::Error(origin + ": " + args.error().message());
  return args;
}

void printOutcome(const core::Outcome& outcome) {
  std::cout << core::phaseName(outcome.phase);
  if (!outcome.message.empty()) std::cout << ": " << outcome.message;
  std::cout << "\n";
  if (auto p = outcome.outputs.find("parameters"); p != outcome.outputs.end()) {
    for (const auto& [name, value] : p->items()) {
      std::cout << "  " << name << " = " << value.get<std::string>() << "\n";
    }
  }
  if (outcome.requeue) std::cout << "  (requeue after " << outcome.requeue->count() << " ms)\n";
}

// Whether the plugin of `manifest` serves `rpc`; says which it does when not.
bool provides(const core::Manifest& manifest, const std::string& rpc) {
  if (manifest.legacy() || manifest.providesRpc(rpc)) return true;
  std::cerr << "plugboard: plugin '" << manifest.name << "' does not provide '" << rpc
            << "'; it provides: " << join(manifest.provides, ", ") << "\n";
  return false;
}

}  // namespace

CommandOptions callOptions() {
  CommandOptions command{po::options_description("call options")};
  auto& options = command.options;
  addPluginDirsOption(options);
  options.add_options()("plugin", po::value<std::string>()->required(),
                        "plugin name or alias, optionally NAME@VERSION")(
      "rpc", po::value<std::string>()->default_value("template.execute"), "the RPC to call")(
      "args", po::value<std::string>(), "the call's args as JSON (default {})")(
      "args-file", po::value<std::string>()->value_name("FILE"),
      "read the args JSON from this file")("json", "print the result as JSON");
  command.positional.add("plugin", 1);
  return command;
}

int cmdCall(const Args& args) {
  po::variables_map vm;
  int exit_code = kExitOk;
  if (!parseCommandArgs(args, "call", vm, exit_code)) return exit_code;
  auto config = settings(vm);
  if (!config) return kExitUsage;
  auto call_args = readArgs(vm);
  if (!call_args) {
    std::cerr << "plugboard: " << call_args.error().message() << "\n";
    return kExitUsage;
  }

  const std::string spec = vm["plugin"].as<std::string>();
  const std::string rpc = vm["rpc"].as<std::string>();
  const auto at = spec.find('@');
  const std::string key = spec.substr(0, at);
  const std::string version = at == std::string::npos ? "" : spec.substr(at + 1);

  auto runtime = openRuntime(*config);
  if (!runtime) return kExitUsage;
  const core::Catalog& catalog = runtime->catalog();
  if (core::Status st = runtime->launcher().unambiguous(key, version, &catalog); !st) {
    std::cerr << "plugboard: " << st.error().message() << "\n";
    return kExitFailed;
  }
  const core::CatalogEntry* entry = catalog.find(key, version);
  if (const core::CatalogConflict* conflict =
          entry == nullptr ? catalog.conflictFor(key) : nullptr) {
    std::cerr << "plugboard: plugin '" << key << "' is ambiguous: " << conflict->message << "\n";
    return kExitFailed;
  }
  // A plugin of the plugin directories is started where the configuration places it
  // ([deploy]), as run and serve would; one only the registry knows, through the deployer of
  // its artifact.
  core::Expected<std::shared_ptr<core::StartedPlugin>> plugin =
      core::Error("plugin '" + spec + "' was not started");
  if (entry != nullptr) {
    if (!provides(entry->manifest, rpc)) return kExitFailed;  // said before loading it
    spdlog::info("loading plugin '{}' {} from {}", entry->manifest.name,
                 entry->manifest.version.text(), entry->file.string());
    plugin = runtime->launcher().open(*entry);
  } else if (const core::Registry* registry = runtime->launcher().registry();
             registry != nullptr && registry->resolve(key, version).ok()) {
    core::PluginRef ref;
    ref.name = key;
    ref.version = version;
    auto target = runtime->launcher().place(ref, &catalog);
    if (!target) {
      std::cerr << "plugboard: " << target.error().message() << "\n";
      return kExitFailed;
    }
    plugin = runtime->launcher().start(*target);
    if (plugin && !provides((*plugin)->handle->manifest(), rpc)) return kExitFailed;
  } else {
    std::vector<std::string> installed;
    for (const auto& e : catalog.entries()) {
      installed.push_back(e.manifest.name + "@" + e.manifest.version.text());
    }
    std::cerr << "plugboard: no plugin '" << spec
              << "' in the plugin directories (installed: " << join(installed, ", ", "none")
              << ")\n";
    return kExitFailed;
  }
  if (!plugin) {
    std::cerr << "plugboard: " << plugin.error().message() << "\n";
    return kExitFailed;
  }
  core::PluginHandle& handle = *(*plugin)->handle;
  const core::Json request = {{"rpc", rpc}, {"key", key}, {"via", "direct"}, {"args", *call_args}};
  const core::Outcome outcome = handle.callText(
      request.dump(-1, ' ', false, core::Json::error_handler_t::replace), handle.newCallId());
  if (vm.count("json")) {
    std::cout << outcome.toJson().dump(2) << "\n";
  } else {
    printOutcome(outcome);
  }
  return outcome.phase == core::Phase::kSucceeded ? kExitOk : kExitFailed;
}

}  // namespace plugboard::cli

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

}  // namespace

CommandOptions callOptions() {
  CommandOptions command{po::options_description("call options")};
  auto& options = command.options;
  addPluginDirsOption(options);
  options.add_options()("plugin", po::value<std::string>()->required(),
                        "plugin name or alias, optionally NAME@VERSION")(
      "rpc", po::value<std::string>()->default_value("template.execute")->value_name("RPC"),
      "the RPC to call")(
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
  // Where the call goes is the dispatcher's answer, as for a workflow step: a plugin of
  // the plugin directories where the configuration places it ([deploy]), or one only the
  // registry knows through the deployer of its artifact. `call` names a plugin: no poll.
  core::Dispatcher& dispatcher = runtime->dispatcher();
  const core::Route route =
      dispatcher.resolve({.key = key, .version = version, .rpc = rpc, .registry = true});
  if (route.kind == core::Route::Kind::kPoll) {
    std::vector<std::string> installed, names;
    for (const auto& e : runtime->catalog().entries()) {
      installed.push_back(e.label);
      names.push_back(e.manifest.name);
    }
    std::cerr << "plugboard: no plugin '" << spec << "' in the plugin directories"
              << core::didYouMean(key, names) << " (installed: " << join(installed, ", ", "none")
              << ")\n";
    return kExitFailed;
  }
  if (route.kind == core::Route::Kind::kPlugin) {
    spdlog::info("loading plugin '{}' {} from {}", route.entry->manifest.name,
                 route.entry->manifest.version.text(), route.entry->file.string());
  }
  core::DispatchRequest request;
  request.key = key;
  request.version = version;
  request.rpc = rpc;
  request.args = std::move(*call_args);
  core::CallControl control;
  const core::Dispatch called =
      dispatcher.call(route, request, control, {.via = core::Via::kDirect, .admit = {}});
  if (!called.reached) {  // refused, or not started: said on stderr
    std::cerr << "plugboard: " << called.outcome.message << "\n";
    return kExitFailed;
  }
  const core::Outcome& outcome = called.outcome;
  if (vm.count("json")) {
    std::cout << outcome.toJson().dump(2) << "\n";
  } else {
    printOutcome(outcome);
  }
  return outcome.phase == core::Phase::kSucceeded ? kExitOk : kExitFailed;
}

}  // namespace plugboard::cli

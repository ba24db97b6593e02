// plugboard graph WORKFLOW: the step graph as Graphviz DOT or Mermaid, optionally
// coloured by the phases of a `run --output json` result.
#include <fstream>
#include <iostream>
#include <sstream>

#include <plugboard/host/json_text.h>

#include "core/runtime/exports.h"
#include "tools/plugboard/cli.h"
#include "tools/plugboard/commands.h"
#include "tools/plugboard/graph.h"
#include "tools/plugboard/run_model.h"

namespace plugboard::cli {
namespace po = boost::program_options;

namespace {

// The phase of each step of a `run --output json` result in `file`, by step id; prints
// the problem (naming the file) and returns nullopt when it is not one.
std::optional<std::map<std::string, std::string>> phasesOf(const std::string& file) {
  auto text = core::readTextFile(file, "run output");
  if (!text) {
    std::cerr << "plugboard: " << text.error().message() << "\n";
    return std::nullopt;
  }
  auto parsed = host::parseJsonText(*text);
  const core::Json result = parsed ? std::move(*parsed) : core::Json(core::Json::value_t::discarded);
  const auto steps = result.is_object() ? result.find("steps") : result.end();
  if (result.is_discarded() || !result.is_object() || steps == result.end() || !steps->is_array()) {
    std::cerr << "plugboard: " << file
              << ": not the output of `plugboard run --output json` (a JSON object with "
                 "\"steps\")\n";
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  for (const auto& step : *steps) {
    if (!step.is_object() || !step.contains("id") || !step["id"].is_string() ||
        !step.contains("phase") || !step["phase"].is_string()) {
      std::cerr << "plugboard: " << file << ": a step without a string \"id\" and \"phase\"\n";
      return std::nullopt;
    }
    out[step["id"].get<std::string>()] = step["phase"].get<std::string>();
  }
  return out;
}

}  // namespace

CommandOptions graphOptions() {
  CommandOptions command{po::options_description("graph options")};
  auto& options = command.options;
  addPluginDirsOption(options);
  addParamOption(options);
  addModelOptions(options);
  options.add_options()("workflow", po::value<std::string>()->required(),
                        "workflow file: TOML, or an Argo Workflow / WorkflowTemplate (YAML)")(
      "format,f", po::value<std::string>()->default_value("dot")->value_name("dot|mermaid"),
      "dot (Graphviz) or mermaid")(
      "run-output", po::value<std::string>()->value_name("FILE"),
      "colour the steps by their phases in FILE, the output of `plugboard run --output json`");
  command.positional.add("workflow", 1);
  return command;
}

int cmdGraph(const Args& args) {
  po::variables_map vm;
  int exit_code = kExitOk;
  if (!parseCommandArgs(args, "graph", vm, exit_code)) return exit_code;
  const auto format = choice(vm, "format", {"dot", "mermaid"});
  if (!format) return kExitUsage;
  const std::string file = vm["workflow"].as<std::string>();
  if (!core::isTomlWorkflow(file)) {
    if (vm.count("run-output")) {
      std::cerr << "plugboard: --run-output colours TOML workflows' steps; an Argo run's "
                   "phases are in its own output (-o json)\n";
      return kExitUsage;
    }
    auto model = core::readModel(
        file, core::ModelSource{vm.count("entrypoint") ? vm["entrypoint"].as<std::string>() : "",
                                vm.count("templates") ? vm["templates"].as<std::string>() : ""});
    if (!model) {
      std::cerr << model.error().message() << "\n";
      return kExitUsage;
    }
    std::cout << (*format == "dot" ? toDot(*model) : toMermaid(*model));
    return kExitOk;
  }
  auto config = settings(vm);
  auto given = config ? params(vm) : std::nullopt;
  if (!config || !given) return kExitUsage;
  std::map<std::string, std::string> phases;
  if (vm.count("run-output")) {
    auto read = phasesOf(vm["run-output"].as<std::string>());
    if (!read) return kExitUsage;
    phases = std::move(*read);
  }
  auto runtime = openRuntime(*config);
  if (!runtime) return kExitUsage;
  auto prepared = runtime->prepare(vm["workflow"].as<std::string>(), *given);
  if (!prepared) {
    std::cerr << prepared.error().message() << "\n";
    return kExitUsage;
  }
  std::vector<GraphStep> steps;
  for (const auto& step : prepared->workflow.steps) {
    auto phase = phases.find(step.id);
    steps.push_back({&step, runtime->place(step), phase == phases.end() ? "" : phase->second});
  }
  std::cout << (*format == "dot" ? toDot(prepared->workflow, steps)
                                 : toMermaid(prepared->workflow, steps));
  return kExitOk;
}

}  // namespace plugboard::cli

// plugboard validate WORKFLOW: checks a workflow file without loading any plugin.
#include <iostream>

#include "tools/plugboard/arcaflow_cli.h"
#include "tools/plugboard/cli.h"
#include "tools/plugboard/commands.h"
#include "tools/plugboard/run_model.h"
#include "tools/plugboard/signals.h"

namespace plugboard::cli {
namespace po = boost::program_options;

CommandOptions validateOptions() {
  CommandOptions command{po::options_description("validate options")};
  auto& options = command.options;
  addPluginDirsOption(options);
  addParamOption(options);
  addModelOptions(options);
  options.add_options()("workflow", po::value<std::string>()->required(),
                        "workflow file: TOML, or an Argo Workflow / WorkflowTemplate (YAML)");
  command.positional.add("workflow", 1);
  return command;
}

int cmdValidate(const Args& args) {
  po::variables_map vm;
  int exit_code = kExitOk;
  if (!parseCommandArgs(args, "validate", vm, exit_code)) return exit_code;
  if (core::isArcaflowWorkflow(arcaflowWorkflowFile(vm))) return validateArcaflow(vm);
  auto config = settings(vm, core::isTomlWorkflow(vm["workflow"].as<std::string>()));
  auto given = config ? params(vm) : std::nullopt;
  if (!config || !given) return kExitUsage;
  const std::string file = vm["workflow"].as<std::string>();
  if (!core::isTomlWorkflow(file)) return validateModel(vm, std::move(*config));
  // The check may start plugins to read their schemas: Ctrl-C and SIGTERM stop those starts
  // and leave nothing behind, as in run.
  const auto cancel_target = handleSignals("the check");
  auto runtime = openRuntime(*config);
  if (!runtime) return kExitUsage;
  cancel_target->setDeployers(runtime->launcher().deployers());
  core::CheckStarts check_starts{&cancel_target->checking, config->server.default_timeout};
  check_starts.unstarted_is_problem = true;
  auto prepared = runtime->prepare(file, *given, check_starts);
  const bool cancelled = cancel_target->wasCancelled();
  cancel_target->release();
  if (cancelled) {
    std::cerr << "plugboard: " << file << ": not checked: cancelled\n";
    return kExitCancelled;
  }
  if (!prepared) {
    std::cerr << prepared.error().message() << "\n";
    return kExitUsage;
  }
  std::cout << file << ": ok: workflow '" << prepared->workflow.name << "', "
            << prepared->workflow.steps.size() << " steps\n";
  return kExitOk;
}

}  // namespace plugboard::cli

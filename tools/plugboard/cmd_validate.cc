// plugboard validate WORKFLOW: checks a workflow file without loading any plugin.
#include <iostream>

#include "tools/plugboard/cli.h"

namespace plugboard::cli {
namespace po = boost::program_options;

int cmdValidate(const Args& args) {
  po::options_description options("validate options");
  addPluginDirsOption(options);
  addParamOption(options);
  options.add_options()("workflow", po::value<std::string>()->required(), "workflow file (TOML)");
  po::positional_options_description positional;
  positional.add("workflow", 1);
  po::variables_map vm;
  int exit_code = kExitOk;
  if (!parseArgs(args, "usage: plugboard validate WORKFLOW --plugins DIR [--param K=V]...", options,
                 positional, vm, exit_code)) {
    return exit_code;
  }
  auto config = settings(vm);
  auto given = config ? params(vm) : std::nullopt;
  if (!config || !given) return kExitUsage;
  const std::string file = vm["workflow"].as<std::string>();
  auto runtime = openRuntime(*config);
  if (!runtime) return kExitUsage;
  auto prepared = runtime->prepare(file, *given);
  if (!prepared) {
    std::cerr << prepared.error().message() << "\n";
    return kExitUsage;
  }
  std::cout << file << ": ok: workflow '" << prepared->workflow.name << "', "
            << prepared->workflow.steps.size() << " steps\n";
  return kExitOk;
}

}  // namespace plugboard::cli

#include "tools/plugboard/arcaflow_cli.h"

#include <iostream>

#include "core/runtime/exports.h"
#include "tools/plugboard/cli.h"

namespace plugboard::cli {
namespace po = boost::program_options;

namespace {

std::filesystem::path inContext(const po::variables_map& vm, const std::filesystem::path& file) {
  if (file.is_absolute() || !vm.count("context")) return file;
  return std::filesystem::path(vm["context"].as<std::string>()) / file;
}

}  // namespace

std::filesystem::path arcaflowWorkflowFile(const po::variables_map& vm) {
  return inContext(vm, vm["workflow"].as<std::string>());
}

int refuseArcaflowRun(const std::filesystem::path& file) {
  std::cerr << "plugboard: " << file.string()
            << ": running Arcaflow workflows is not supported yet; `plugboard validate` and "
               "`plugboard graph` take them\n";
  return kExitUsage;
}

int validateArcaflow(const po::variables_map& vm) {
  const auto file = arcaflowWorkflowFile(vm);
  const core::ArcaflowLoad load = core::loadArcaflowWorkflow(file);
  for (const auto& p : load.problems) std::cerr << p.oneLine() << "\n";
  if (!load.ok()) return kArcaflowInvalid;
  if (vm.count("input")) {
    const auto input_file = inContext(vm, vm["input"].as<std::string>());
    auto input = core::readArcaflowInput(input_file);
    if (!input) {
      std::cerr << input.error().message() << "\n";
      return kArcaflowInvalid;
    }
    const auto bad = core::checkArcaflowInput(*load.workflow, *input);
    for (const auto& b : bad) std::cerr << input_file.string() << ": " << b << "\n";
    if (!bad.empty()) return kArcaflowInvalid;
  }
  std::cout << file.string() << ": ok: Arcaflow workflow, " << load.workflow->steps.size()
            << " steps, outputs";
  for (const auto& [id, _] : load.workflow->outputs) std::cout << " " << id;
  std::cout << "; the plugins' schemas were not checked\n";
  return kArcaflowOk;
}

}  // namespace plugboard::cli

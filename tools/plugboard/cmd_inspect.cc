// plugboard inspect FILE: one plugin file's manifest, read without loading; --load also
// loads it and reports the ABI check.
#include <iostream>

#include "core/runtime/exports.h"
#include "plugboard/abi.h"
#include "plugboard/host/trust.h"
#include "tools/plugboard/cli.h"
#include "tools/plugboard/commands.h"

namespace plugboard::cli {
namespace po = boost::program_options;

namespace {

void printManifest(const std::string& file, const core::Manifest& m) {
  std::vector<std::string> schemas;
  for (const auto& [rpc, schema] : m.schemas.items()) schemas.push_back(rpc);
  std::cout << "file:        " << file << "\n"
            << "kind:        " << m.kind << "\n"
            << "name:        " << m.name << "\n"
            << "version:     " << m.version.text() << "\n"
            << "abi:         " << m.abi << "\n";
  if (m.kind == "deployer") {
    std::cout << "deploys:     " << join(m.deploys, ", ", "-") << "\n"
              << "priority:    " << m.priority << "\n"
              << "description: " << (m.description.empty() ? "-" : m.description) << "\n"
              << "options:" << (m.config.empty() ? "     -" : "") << "\n";
    for (const auto& [key, spec] : m.config.items()) {
      std::cout << "  " << key << " (" << spec.value("type", "?")
                << "): " << spec.value("description", "") << "\n";
    }
    std::cout << "manifest:    " << m.text << "\n";
    return;
  }
  std::cout << "provides:    "
            << (m.legacy() ? "- (legacy: polled for every RPC)" : join(m.provides, ", ", "-"))
            << "\n"
            << "aliases:     " << join(m.aliases, ", ", "-") << "\n"
            << "concurrency: "
            << (m.concurrency == core::Concurrency::kSerial ? "serial" : "parallel") << "\n"
            << "schemas:     " << join(schemas, ", ", "-") << "\n"
            << "description: " << (m.description.empty() ? "-" : m.description) << "\n"
            << "manifest:    " << m.text << "\n";
}

}  // namespace

CommandOptions inspectOptions() {
  CommandOptions command{po::options_description("inspect options")};
  auto& options = command.options;
  options.add_options()("file", po::value<std::string>()->required(), "plugin .so file")(
      "json", "print JSON")("load", "also load the plugin and report the ABI check");
  command.positional.add("file", 1);
  return command;
}

int cmdInspect(const Args& args) {
  po::variables_map vm;
  int exit_code = kExitOk;
  if (!parseCommandArgs(args, "inspect", vm, exit_code)) return exit_code;
  const std::string file = vm["file"].as<std::string>();
  const bool json = vm.count("json") > 0;

  // Read without loading. A file the catalog refuses (another ABI, the trust rules) is
  // still shown when its manifest itself can be read.
  std::string kind = "executor";
  if (auto section = core::readElfSection(file, PLUGBOARD_MANIFEST_SECTION)) {
    if (auto m = core::parseManifest(*section)) kind = m->kind;
  }
  auto verdict = core::readPluginFile(file, {}, kind);
  // --load runs its code: the directories above it count, as for every plugin file.
  if (verdict) {
    if (core::Status above = host::checkDirectoriesAbove(file, {}); !above) verdict = above.error();
  }
  core::Expected<core::Manifest> manifest = core::Error("");
  if (verdict) {
    manifest = verdict->manifest;
  } else {
    auto section = core::readElfSection(file, PLUGBOARD_MANIFEST_SECTION);
    manifest =
        section ? core::parseManifest(*section) : core::Expected<core::Manifest>(verdict.error());
    if (!manifest) manifest = verdict.error();
  }
  if (!manifest) {
    if (json) {
      std::cout << core::Json{{"file", file}, {"error", manifest.error().message()}}.dump(2)
                << "\n";
    }
    std::cerr << file << ": refused: " << manifest.error().message() << "\n";
    return kExitFailed;
  }
  core::Json out = {{"file", file}, {"manifest", core::Json::parse(manifest->text)}};
  if (!verdict) out["error"] = verdict.error().message();
  if (!json) {
    printManifest(file, *manifest);
    if (!verdict) std::cout << "refused:     " << verdict.error().message() << "\n";
  }
  int status = verdict ? kExitOk : kExitFailed;

  if (vm.count("load") && !verdict && verdict.error().code() == core::Error::Code::kUntrusted) {
    out["load"] = {{"ok", false}, {"error", "not loaded: the file failed the trust checks"}};
    if (!json) std::cout << "load:        not loaded: the file failed the trust checks\n";
  } else if (vm.count("load") && kind == "deployer") {
    auto module = core::DeployerModule::load(*verdict);
    out["load"] = module ? core::Json{{"ok", true}}
                         : core::Json{{"ok", false}, {"error", module.error().message()}};
    if (!json)
      std::cout << "load:        "
                << (module ? "ok (created with no options)" : "failed: " + module.error().message())
                << "\n";
    if (!module) status = kExitFailed;
  } else if (vm.count("load")) {
    auto abi = core::checkPluginLoads(file, *manifest);
    if (abi) {
      out["load"] = {{"ok", true}, {"abi", *abi}};
      if (!json) {
        std::cout << "load:        ok (ABI " << *abi << ", runtime ABI " << PLUGBOARD_ABI_MAJOR
                  << "." << PLUGBOARD_ABI_MINOR << "; manifest matches the file)\n";
      }
    } else {
      out["load"] = {{"ok", false}, {"error", abi.error().message()}};
      if (!json) std::cout << "load:        failed: " << abi.error().message() << "\n";
      status = kExitFailed;
    }
  }
  if (json) std::cout << out.dump(2) << "\n";
  return status;
}

}  // namespace plugboard::cli

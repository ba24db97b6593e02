// plugboard plugins list: the catalogs of the plugin and deployer directories, read without
// loading.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/runtime/exports.h"
#include "tools/plugboard/cli.h"
#include "tools/plugboard/commands.h"

namespace plugboard::cli {
namespace po = boost::program_options;

namespace {

void printRows(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    std::cout << line << "\n";
  }
}

void printTable(const core::Catalog& catalog, const core::Catalog& deployers) {
  std::vector<std::vector<std::string>> rows = {{"NAME", "VERSION", "PROVIDES", "STATE", "FILE"}};
  for (const auto& e : catalog.entries()) {
    rows.push_back({e.manifest.name, e.manifest.version.text(),
                    e.manifest.legacy() ? "(legacy: polled for every RPC)"
                                        : join(e.manifest.provides, ",", "-"),
                    "available", e.file.string()});
  }
  printRows(rows);
  for (const auto& p : catalog.problems()) std::cout << p.oneLine() << "\n";
  for (const auto& c : catalog.conflicts()) std::cout << c.oneLine() << "\n";
  std::cout << "\n";
  rows = {{"DEPLOYER", "VERSION", "DEPLOYS", "PRIORITY", "FILE"}};
  for (const auto& e : deployers.entries()) {
    rows.push_back({e.manifest.name, e.manifest.version.text(), join(e.manifest.deploys, ",", "-"),
                    std::to_string(e.manifest.priority), e.file.string()});
  }
  printRows(rows);
  for (const auto& p : deployers.problems()) std::cout << p.oneLine() << "\n";
}

}  // namespace

CommandOptions pluginsListOptions() {
  CommandOptions command{po::options_description("plugins list options")};
  auto& options = command.options;
  addPluginDirsOption(options);
  options.add_options()("json", "print JSON instead of a table");
  return command;
}

int cmdPluginsList(const Args& args) {
  po::variables_map vm;
  int exit_code = kExitOk;
  if (!parseCommandArgs(args, "plugins list", vm, exit_code)) return exit_code;
  auto config = settings(vm);
  if (!config) return kExitUsage;
  const auto catalog = core::Catalog::scan(config->plugin_dirs, config->trust);
  const auto deployers = core::Catalog::scan(config->deployer_dirs, config->trust, "deployer");
  // A plugin directory that cannot be read (listed with its reason) fails the command:
  // the list is not the directory's.
  const int status =
      catalog.directoryProblems(config->plugin_dirs).empty() ? kExitOk : kExitFailed;
  if (!vm.count("json")) {
    printTable(catalog, deployers);
    return status;
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : catalog.entries()) {
    auto item = e.manifest.toJson();
    item["file"] = e.file.string();
    item["state"] = "available";
    list.push_back(std::move(item));
  }
  for (const auto& p : catalog.problems()) {
    list.push_back({{"file", p.file.string()}, {"state", "error"}, {"error", p.message}});
  }
  nlohmann::json deployer_list = nlohmann::json::array();
  for (const auto& e : deployers.entries()) {
    auto item = e.manifest.toJson();
    item["file"] = e.file.string();
    deployer_list.push_back(std::move(item));
  }
  for (const auto& p : deployers.problems()) {
    deployer_list.push_back({{"file", p.file.string()}, {"state", "error"}, {"error", p.message}});
  }
  nlohmann::json conflicts = nlohmann::json::array();
  for (const auto& c : catalog.conflicts()) conflicts.push_back(c.toJson());
  std::cout << nlohmann::json{{"plugins", list},
                              {"conflicts", conflicts},
                              {"deployers", deployer_list}}
                   .dump(2)
            << "\n";
  return status;
}

}  // namespace plugboard::cli

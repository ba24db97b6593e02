#include "tools/plugboard/cli.h"

#include <cstdlib>
#include <iostream>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace plugboard::cli {
namespace po = boost::program_options;

po::options_description commonOptions() {
  po::options_description common("Common options");
  common.add_options()("help,h", "show this help")(
      "log-level", po::value<std::string>()->default_value("warn"),
      "log level: trace, debug, info, warn, error, off");
  return common;
}

bool parseArgs(const Args& args, const std::string& usage, const po::options_description& options,
               const po::positional_options_description& positional, po::variables_map& vm,
               int& exit_code) {
  po::options_description all;
  all.add(options).add(commonOptions());
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << usage << "\n" << all << "\n";
      exit_code = kExitOk;
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "plugboard: " << e.what() << "\n" << usage << "\n(--help for details)\n";
    exit_code = kExitUsage;
    return false;
  }
  if (!configureLogging(vm["log-level"].as<std::string>())) {
    std::cerr << "plugboard: unknown --log-level '" << vm["log-level"].as<std::string>()
              << "'; use trace, debug, info, warn, error or off\n";
    exit_code = kExitUsage;
    return false;
  }
  return true;
}

void addPluginDirsOption(po::options_description& options) {
  options.add_options()("plugins,p", po::value<std::vector<std::string>>()->composing(),
                        "plugin directory (repeatable; default: $PLUGBOARD_PLUGINS, "
                        "colon-separated)");
}

std::vector<std::string> pluginDirs(const po::variables_map& vm) {
  std::vector<std::string> dirs;
  if (vm.count("plugins")) return vm["plugins"].as<std::vector<std::string>>();
  if (const char* env = std::getenv("PLUGBOARD_PLUGINS"); env != nullptr) {
    std::string all = env;
    for (std::size_t start = 0; start <= all.size();) {
      auto end = all.find(':', start);
      if (end == std::string::npos) end = all.size();
      if (end > start) dirs.push_back(all.substr(start, end - start));
      start = end + 1;
    }
  }
  if (dirs.empty()) {
    std::cerr << "plugboard: no plugin directory: pass --plugins DIR or set PLUGBOARD_PLUGINS\n";
  }
  return dirs;
}

void addParamOption(po::options_description& options) {
  options.add_options()("param", po::value<std::vector<std::string>>()->composing(),
                        "set a workflow input: --param NAME=VALUE (repeatable)");
}

void addPriorityOption(po::options_description& options) {
  options.add_options()("priority", po::value<std::vector<std::string>>()->composing(),
                        "poll priority of a plugin: --priority NAME=N, higher first (repeatable)");
}

namespace {
std::optional<std::map<std::string, std::string>> pairs(const po::variables_map& vm,
                                                        const char* option) {
  std::map<std::string, std::string> out;
  if (!vm.count(option)) return out;
  for (const auto& item : vm[option].as<std::vector<std::string>>()) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "plugboard: --" << option << " '" << item << "': expected NAME=VALUE\n";
      return std::nullopt;
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}
}  // namespace

std::optional<std::map<std::string, std::string>> params(const po::variables_map& vm) {
  return pairs(vm, "param");
}

std::optional<core::DispatcherOptions> dispatcherOptions(const po::variables_map& vm) {
  auto given = pairs(vm, "priority");
  if (!given) return std::nullopt;
  core::DispatcherOptions options;
  for (const auto& [name, value] : *given) {
    try {
      std::size_t used = 0;
      options.priority[name] = std::stoi(value, &used);
      if (used != value.size()) throw std::invalid_argument(value);
    } catch (const std::exception&) {
      std::cerr << "plugboard: --priority " << name << "=" << value << ": expected an integer\n";
      return std::nullopt;
    }
  }
  return options;
}

core::Catalog scanPlugins(const std::vector<std::string>& dirs) {
  auto catalog = core::Catalog::scan(std::vector<std::filesystem::path>(dirs.begin(), dirs.end()));
  for (const auto& p : catalog.problems()) spdlog::warn("{}", p.oneLine());
  return catalog;
}

std::optional<PreparedWorkflow> prepareWorkflow(const std::string& file,
                                                const core::Catalog& catalog,
                                                const std::map<std::string, std::string>& given) {
  auto loaded = core::loadWorkflow(file);
  for (const auto& p : loaded.problems) std::cerr << p.oneLine() << "\n";
  if (!loaded.ok()) return std::nullopt;
  auto inputs = core::resolveInputs(*loaded.workflow, given);
  if (!inputs) {
    std::cerr << file << ": " << inputs.error().message() << "\n";
    return std::nullopt;
  }
  auto problems = core::checkWorkflow(*loaded.workflow, catalog, *inputs);
  for (const auto& p : problems) std::cerr << p.oneLine() << "\n";
  if (!problems.empty()) return std::nullopt;
  return PreparedWorkflow{std::move(*loaded.workflow), std::move(*inputs)};
}

bool configureLogging(const std::string& level) {
  auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") return false;
  static auto logger = [] {
    auto l = spdlog::stderr_color_mt("plugboard");
    l->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
    spdlog::set_default_logger(l);
    return l;
  }();
  logger->set_level(parsed);
  return true;
}

}  // namespace plugboard::cli

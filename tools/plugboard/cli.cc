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

std::string join(const std::vector<std::string>& items, const std::string& separator,
                 const std::string& empty) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out.empty() ? empty : out;
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

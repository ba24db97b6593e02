// plugboard new plugin|deployer NAME: writes a new project from a template
// (tools/plugboard/scaffold.h).
#include <iostream>

#include "tools/plugboard/cli.h"
#include "tools/plugboard/commands.h"
#include "tools/plugboard/scaffold.h"

namespace plugboard::cli {
namespace po = boost::program_options;

CommandOptions newOptions() {
  CommandOptions command{po::options_description("new options")};
  command.options.add_options()(
      "what", po::value<std::string>()->required()->value_name("plugin|deployer"),
      "plugin or deployer")("name", po::value<std::string>()->required(),
                            "the plugin's or deployer's name, as its manifest states it")(
      "lang", po::value<std::string>()->default_value("cpp")->value_name("cpp|python"),
      "the plugin's language: cpp or python (a deployer is C++)")(
      "dir", po::value<std::string>()->value_name("DIR"),
      "the project's directory (default: ./NAME)");
  command.positional.add("what", 1).add("name", 1);
  return command;
}

int cmdNew(const Args& args) {
  po::variables_map vm;
  int exit_code = kExitOk;
  if (!parseCommandArgs(args, "new", vm, exit_code)) return exit_code;
  const auto what = choice(vm, "what", {"plugin", "deployer"}, "KIND");
  const auto lang = choice(vm, "lang", {"cpp", "python"});
  if (!what || !lang) return kExitUsage;
  if (*what == "deployer" && *lang != "cpp") {
    std::cerr << "plugboard: a deployer is written in C++; leave out --lang\n";
    return kExitUsage;
  }
  const std::string kind = *what == "deployer" ? "deployer" : "plugin-" + *lang;
  const std::string name = vm["name"].as<std::string>();
  const Origin origin = thisOrigin();
  auto files = projectFiles(kind, name, origin);
  if (!files) {
    std::cerr << "plugboard: " << files.error().message() << "\n";
    return kExitUsage;
  }
  const std::filesystem::path dir = vm.count("dir") ? vm["dir"].as<std::string>() : name;
  if (auto written = writeProject(dir, *files); !written) {
    std::cerr << "plugboard: " << written.error().message() << "\n";
    return kExitFailed;
  }
  std::vector<std::string> paths;
  for (const auto& file : *files) paths.push_back(file.path.string());
  std::cout << "Wrote the "
            << (*what == "deployer" ? "deployer"
                : *lang == "cpp"    ? "C++ plugin"
                                    : "Python plugin")
            << " '" << name << "' to " << dir.string() << "/: " << join(paths, ", ") << "\n"
            << "Build, test and try it as " << (dir / "README.md").string() << " says.\n";
  if (kind != "plugin-python" && origin.package.empty()) {
    std::cerr << "plugboard: note: the plugboard SDK is not installed beside "
              << origin.plugboard.string()
              << " (no lib/cmake/plugboard/plugboardConfig.cmake): install it (the package "
                 "plugboard-dev), or configure the project with -Dplugboard_DIR=DIR\n";
  }
  return kExitOk;
}

}  // namespace plugboard::cli

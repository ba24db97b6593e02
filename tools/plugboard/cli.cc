#include "tools/plugboard/cli.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "tools/plugboard/terminal.h"

namespace plugboard::cli {
namespace po = boost::program_options;

po::options_description commonOptions() {
  po::options_description common("Common options");
  common.add_options()("help,h", "show this help")(
      "log-level",
      po::value<std::string>()
          ->default_value(std::string(core::defaults::kLogLevel))
          ->value_name("trace|debug|info|warn|error|off"),
      "log level: trace, debug, info, warn, error, off");
  return common;
}

po::options_description withCommonOptions(const po::options_description& own) {
  po::options_description all;
  all.add(own).add(commonOptions());
  return all;
}

namespace {

// The name a user knows an option by in messages: the operand word (WORKFLOW, KIND) for one
// filled by position, else --name.
std::string shownName(const std::string& option,
                      const po::positional_options_description& positional,
                      std::string_view operands) {
  std::vector<std::string> words;
  for (std::size_t start = 0; start < operands.size();) {
    auto end = operands.find(' ', start);
    if (end == std::string_view::npos) end = operands.size();
    if (end > start) words.emplace_back(operands.substr(start, end - start));
    start = end + 1;
  }
  for (unsigned i = 0; i < positional.max_total_count() && i < words.size(); ++i) {
    if (positional.name_for_position(i) == option) return words[i];
  }
  return "--" + option;
}

// What went wrong on the command line, in the user's terms: a missing operand by its name
// in the usage line, an unknown option with the nearest known one.
std::string problem(const po::error& e, const po::options_description& all,
                    const po::positional_options_description& positional, std::string_view operands,
                    const po::variables_map& given) {
  if (const auto* missing = dynamic_cast<const po::required_option*>(&e)) {
    std::string name = missing->get_option_name();
    if (name.starts_with("--")) name.erase(0, 2);
    const std::string shown = shownName(name, positional, operands);
    if (shown.starts_with("--")) return shown + " is required";
    // The first operand missing, in the usage line's order ("new" lacks KIND before NAME).
    for (unsigned i = 0; i < positional.max_total_count(); ++i) {
      const std::string& option = positional.name_for_position(i);
      if (!given.count(option)) return "missing " + shownName(option, positional, operands);
    }
    return "missing " + shown;
  }
  if (const auto* unknown = dynamic_cast<const po::unknown_option*>(&e)) {
    std::vector<std::string> known;
    for (const auto& option : all.options()) known.push_back("--" + option->long_name());
    const std::string given = unknown->get_option_name();
    return "unknown option '" + given + "'" + core::didYouMean(given, known);
  }
  return e.what();
}

}  // namespace

bool parseArgs(const Args& args, const std::string& usage, const po::options_description& options,
               const po::positional_options_description& positional, po::variables_map& vm,
               int& exit_code, std::string_view operands) {
  const po::options_description all = withCommonOptions(options);
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << usage << "\n" << all << "\n";
      exit_code = kExitOk;
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "plugboard: " << problem(e, all, positional, operands, vm) << "\n"
              << usage << "\n(--help for details)\n";
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
  options.add_options()("config", po::value<std::string>()->value_name("FILE"),
                        "configuration file (TOML; see docs/configuration.md)")(
      "plugins,p", po::value<std::vector<std::string>>()->composing()->value_name("DIR"),
      "plugin directory (repeatable; default: the config's plugin_dirs, else "
      "$PLUGBOARD_PLUGINS, colon-separated, else the system plugin directory)")(
      "deployers", po::value<std::vector<std::string>>()->composing()->value_name("DIR"),
      "deployer module directory (repeatable; default: the config's deployer_dirs, else "
      "$PLUGBOARD_DEPLOYERS, else the deployers installed with plugboard)")(
      "registry", po::value<std::string>()->value_name("FILE"),
      "plugin registry file (TOML; see docs/registry.md)");
}

void addParamOption(po::options_description& options) {
  options.add_options()(
      "param", po::value<std::vector<std::string>>()->composing()->value_name("NAME=VALUE"),
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

std::string defaultText(core::Millis value) { return core::formatDuration(value); }
std::string defaultText(std::string_view value) { return std::string(value); }
std::string defaultText(std::size_t value) { return std::to_string(value); }
std::string defaultText(int value) { return std::to_string(value); }
std::string defaultText(bool value) { return value ? "true" : "false"; }
std::string configHelp(const std::string& what, const std::string& key,
                       const std::string& default_text) {
  return what + " (default: the config's " + key + ", else " + default_text + ")";
}

// The directories of a colon-separated list.
std::vector<std::filesystem::path> splitPath(const std::string& all) {
  std::vector<std::filesystem::path> out;
  for (std::size_t start = 0; start <= all.size();) {
    auto end = all.find(':', start);
    if (end == std::string::npos) end = all.size();
    if (end > start) out.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::vector<std::filesystem::path> defaultDeployerDirs() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  std::vector<std::filesystem::path> out;
  // The build tree puts them next to the binary; an installation under <prefix>/lib.
  for (const auto& dir :
       {exe.parent_path() / "deployers",
        exe.parent_path().parent_path() / "lib" / "plugboard" / "deployers",
        exe.parent_path().parent_path() / CMAKE_INSTALL_LIBDIR_NAME / "plugboard" / "deployers"}) {
    if (std::filesystem::is_directory(dir, ec) &&
        std::find(out.begin(), out.end(), dir) == out.end()) {
      out.push_back(dir);
    }
  }
  return out;
}

std::vector<std::filesystem::path> defaultPluginDirs() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  // Not <build>/plugins next to a build tree's binary: there --plugins stays explicit.
  const auto dir = exe.parent_path().parent_path() / core::defaults::kSystemPluginDir;
  if (!std::filesystem::is_directory(dir, ec)) return {};
  return {dir};
}

std::optional<std::string> choice(const po::variables_map& vm, const std::string& name,
                                  std::initializer_list<std::string_view> choices,
                                  std::string_view shown) {
  const std::string value = vm[name].as<std::string>();
  std::string listed;
  std::vector<std::string> words;
  for (const std::string_view c : choices) {
    if (c == value) return value;
    listed += (listed.empty() ? "" : " or ") + std::string(c);
    words.emplace_back(c);
  }
  std::cerr << "plugboard: " << (shown.empty() ? "--" + name : std::string(shown)) << " must be "
            << listed << ", got '" << value << "'" << core::didYouMean(value, words) << "\n";
  return std::nullopt;
}

std::optional<std::map<std::string, std::string>> params(const po::variables_map& vm) {
  return pairs(vm, "param");
}

std::optional<core::Config> settings(const po::variables_map& vm, bool need_plugin_dirs) {
  core::Config config;
  if (vm.count("config")) {
    auto loaded = core::loadConfig(vm["config"].as<std::string>());
    if (!loaded) {
      std::cerr << "plugboard: " << loaded.error().message() << "\n";
      return std::nullopt;
    }
    config = std::move(*loaded);
  }
  const bool level_flag = vm.count("log-level") && !vm["log-level"].defaulted();
  configureLogging(level_flag ? vm["log-level"].as<std::string>() : config.log_level,
                   config.log_format);

  if (vm.count("plugins")) {
    config.plugin_dirs.clear();
    for (const auto& d : vm["plugins"].as<std::vector<std::string>>())
      config.plugin_dirs.push_back(d);
  } else if (const char* env = std::getenv("PLUGBOARD_PLUGINS");
             config.plugin_dirs.empty() && env) {
    config.plugin_dirs = splitPath(env);
  }
  if (config.plugin_dirs.empty()) config.plugin_dirs = defaultPluginDirs();
  if (vm.count("registry")) config.registry = vm["registry"].as<std::string>();
  // A registry is a source of plugins too (a Python plugin's project has only that).
  if (config.plugin_dirs.empty() && need_plugin_dirs && config.registry.empty()) {
    std::cerr << "plugboard: no plugin directory: pass --plugins DIR, set plugin_dirs in the "
                 "--config file, or set PLUGBOARD_PLUGINS\n";
    return std::nullopt;
  }

  if (vm.count("deployers")) {
    config.deployer_dirs.clear();
    for (const auto& d : vm["deployers"].as<std::vector<std::string>>())
      config.deployer_dirs.push_back(d);
  } else if (const char* env = std::getenv("PLUGBOARD_DEPLOYERS");
             config.deployer_dirs.empty() && env) {
    config.deployer_dirs = splitPath(env);
  }
  if (config.deployer_dirs.empty()) config.deployer_dirs = defaultDeployerDirs();

  if (auto given = pairs(vm, "priority"); !given) {
    return std::nullopt;
  } else {
    for (const auto& [name, value] : *given) {
      try {
        std::size_t used = 0;
        config.priority[name] = std::stoi(value, &used);
        if (used != value.size()) throw std::invalid_argument(value);
      } catch (const std::exception&) {
        std::cerr << "plugboard: --priority " << name << "=" << value << ": expected an integer\n";
        return std::nullopt;
      }
    }
  }
  // The flags that override a key of the file (and serve's --idle-timeout, which no key
  // has), each applied here and nowhere else; a command without such a flag never has it
  // in `vm`.
  core::ServerOptions& server = config.server;
  if (vm.count("listen")) server.listen = vm["listen"].as<std::string>();
  if (vm.count("token-file")) config.token_file = vm["token-file"].as<std::string>();
  if (vm.count("workers")) server.threads = vm["workers"].as<int>();
  if (vm.count("body-limit")) server.body_limit = vm["body-limit"].as<std::size_t>();
  if (vm.count("max-connections")) server.max_connections = vm["max-connections"].as<std::size_t>();
  if (vm.count("poll-unknown")) server.poll_unknown = true;
  if (vm.count("no-watch")) config.watch = false;
  for (const auto& [flag, target] : {std::pair{"timeout", &server.default_timeout},
                                     std::pair{"default-timeout", &server.default_timeout},
                                     std::pair{"poll-interval", &server.poll_interval},
                                     std::pair{"grace-period", &server.grace_period},
                                     std::pair{"reply-deadline", &server.reply_deadline},
                                     std::pair{"idle-timeout", &server.idle_timeout}}) {
    if (!vm.count(flag)) continue;
    auto d = core::parseDuration(vm[flag].as<std::string>());
    if (!d) {
      std::cerr << "plugboard: --" << flag << ": " << d.error().message() << "\n";
      return std::nullopt;
    }
    *target = *d;
  }
  return config;
}

std::unique_ptr<core::Runtime> openRuntime(const core::Config& config, bool isolate_polls) {
  auto runtime = core::Runtime::open(config, isolate_polls);
  if (!runtime) {
    std::cerr << "plugboard: " << runtime.error().message() << "\n";
    return nullptr;
  }
  return std::move(*runtime);
}

int endRun(core::Runtime& runtime, int status, int abandoned) {
  if (abandoned > 0) {
    std::fprintf(stderr, "plugboard: warning: %d plugin call%s ignored cancellation and %s abandoned\n",
                 abandoned, abandoned == 1 ? "" : "s", abandoned == 1 ? "was" : "were");
  }
  std::fflush(stdout);
  std::fflush(stderr);
  if (abandoned > 0) {
    runtime.launcher().deployers().abandon();
    std::_Exit(status);
  }
  return status;
}

namespace {

// %j: the log message as a JSON string, quotes and escapes included.
class JsonMessage : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string text = nlohmann::json(std::string(msg.payload.data(), msg.payload.size()))
                                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessage>();
  }
};

// Standard error with colours, or above the lines of a live display while one is drawn
// (tools/plugboard/terminal.h): a log line must not push them down the screen.
class AboveLiveSink final : public spdlog::sinks::sink {
 public:
  void log(const spdlog::details::log_msg& msg) override {
    if (!liveUp()) {
      inner_->log(msg);
      return;
    }
    spdlog::memory_buf_t text;
    {
      std::lock_guard lock(mu_);
      formatter_->format(msg, text);
    }
    printAbove(std::string_view(text.data(), text.size()));
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override {
    set_formatter(std::make_unique<spdlog::pattern_formatter>(pattern));
  }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    {
      std::lock_guard lock(mu_);
      formatter_ = formatter->clone();
    }
    inner_->set_formatter(std::move(formatter));
  }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_ =
      std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  std::mutex mu_;
  std::unique_ptr<spdlog::formatter> formatter_ = std::make_unique<spdlog::pattern_formatter>();
};

}  // namespace

bool configureLogging(const std::string& level, const std::string& format) {
  auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") return false;
  static auto logger = [] {
    auto l = std::make_shared<spdlog::logger>("plugboard", std::make_shared<AboveLiveSink>());
    spdlog::set_default_logger(l);
    return l;
  }();
  if (format == "json") {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<JsonMessage>('j').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%e","level":"%l","message":%j})");
    logger->set_formatter(std::move(formatter));
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  }
  logger->set_level(parsed);
  return true;
}

}  // namespace plugboard::cli

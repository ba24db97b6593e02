#include "deployers/common/launch.h"

#include <fcntl.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>

#include <filesystem>
#include <stdexcept>
#include <utility>

#include <plugboard/host/trust.h>

namespace plugboard::deployer_common {

void requireTrusted(const std::string& file, const host::Status& st) {
  if (st || st.error().code() == host::Error::Code::kIo) return;
  throw std::runtime_error(host::refusal(file, st).error().message());
}

std::shared_ptr<Launch> makeLaunch(std::string label, std::string log_name, std::string deployer,
                                   std::string program, std::vector<std::string> args,
                                   const std::map<std::string, std::string>& extra_env,
                                   Settings settings, plugboard::Logger log) {
  auto launch = std::make_shared<Launch>();
  launch->argv.push_back(program);
  for (auto& a : args) launch->argv.push_back(std::move(a));
  std::map<std::string, std::string> added = extra_env;
  for (const auto& [name, value] : settings.env) added[name] = value;
  launch->env = host::environmentWith(added);
  launch->label = std::move(label);
  launch->log_name = std::move(log_name);
  launch->deployer = std::move(deployer);
  launch->program = std::move(program);
  launch->settings = std::move(settings);
  launch->log = log;
  return launch;
}

std::shared_ptr<const Launch> makeHostLaunch(std::string plugin, std::string host,
                                             Settings settings, plugboard::Logger log) {
  constexpr std::string_view kOwnDescriptor = "/proc/self/fd/";
  constexpr int kPassedAs = 3;
  std::shared_ptr<const Fd> passed;
  if (plugin.starts_with(kOwnDescriptor)) {
    // The child's /proc/self is its own: it gets the file itself.
    Fd fd(::open(plugin.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0)
      throw std::runtime_error("cannot open " + plugin + ": " + std::strerror(errno));
    passed = std::make_shared<const Fd>(std::move(fd));
  }
  std::vector<std::string> args = {passed ? std::string(kOwnDescriptor) + std::to_string(kPassedAs)
                                          : plugin};
  if (settings.config) {
    args.push_back("--config");
    args.push_back(settings.config->dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  std::string stem = std::filesystem::path(plugin).stem().string();
  auto launch = makeLaunch(std::move(plugin), std::move(stem), "process", std::move(host),
                           std::move(args), {}, std::move(settings), log);
  launch->passed = std::move(passed);
  return launch;
}

Spawned spawnChild(const Launch& launch, const std::vector<std::string>& argv) {
  const Settings& s = launch.settings;
  host::SpawnOptions options;
  options.program = launch.program;
  options.argv = argv;
  options.env = launch.env;
  options.cwd = s.cwd;
  options.cwd_what = "option 'cwd'";
  options.channel_on_fds_3_4 = launch.channel_on_fds_3_4;
  if (launch.passed) {
    options.pass_fd = launch.passed->get();
    options.pass_fd_as = launch.channel_on_fds_3_4 ? 5 : 3;
  }
  if (s.memory)
    options.limits.push_back({RLIMIT_AS, *s.memory, *s.memory, "option 'memory'", s.memory_text});
  // SIGXCPU at the soft limit names the cause; SIGKILL a second later if it is caught.
  if (s.cpu_seconds) {
    options.limits.push_back(
        {RLIMIT_CPU, *s.cpu_seconds, *s.cpu_seconds + 1, "option 'cpu_time'", ""});
  }
  if (s.open_files) {
    options.limits.push_back(
        {RLIMIT_NOFILE, *s.open_files, *s.open_files, "option 'open_files'", ""});
  }
  auto spawned = host::spawn(options);
  if (!spawned) throw std::runtime_error(spawned.error().message());
  return std::move(*spawned);
}

}  // namespace plugboard::deployer_common

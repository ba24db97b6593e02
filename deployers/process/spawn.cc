#include "deployers/process/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>

extern char** environ;

namespace plugboard::process_deployer {

namespace {

std::string errnoText(int err) { return std::error_code(err, std::generic_category()).message(); }

// Where the child parks descriptors while it puts others in place.
constexpr int kHighFd = 64;

}  // namespace

// ---------------------------------------------------------------------------------------
// Starting a child

std::shared_ptr<Launch> makeLaunch(std::string label, std::string log_name, std::string deployer,
                                   std::string program, std::vector<std::string> args,
                                   const std::map<std::string, std::string>& extra_env,
                                   Settings settings, plugboard::Logger log) {
  auto launch = std::make_shared<Launch>();
  launch->argv.push_back(program);
  for (auto& a : args) launch->argv.push_back(std::move(a));
  std::map<std::string, std::string> added = extra_env;
  for (const auto& [name, value] : settings.env) added[name] = value;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (added.count(std::string(entry.substr(0, entry.find('=')))) == 0) {
      launch->env.emplace_back(entry);
    }
  }
  for (const auto& [name, value] : added) launch->env.push_back(name + "=" + value);
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
  std::vector<std::string> args = {plugin};
  if (settings.config) {
    args.push_back("--config");
    args.push_back(settings.config->dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  std::string stem = std::filesystem::path(plugin).stem().string();
  return makeLaunch(std::move(plugin), std::move(stem), "process", std::move(host),
                    std::move(args), {}, std::move(settings), log);
}

// Sets SIGPIPE to SIG_IGN unless the runtime chose its own disposition. See process.cc.
void ignoreSigpipe() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) return;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, nullptr);
}

std::pair<Fd, Fd> makePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error("cannot create a pipe: " + errnoText(errno));
  Fd ends[2] = {Fd(fds[0]), Fd(fds[1])};
  for (Fd& end : ends) {
    if (end.get() > 2) continue;
    const int moved = ::fcntl(end.get(), F_DUPFD_CLOEXEC, 3);
    if (moved < 0) throw std::runtime_error("cannot create a pipe: " + errnoText(errno));
    end = Fd(moved);
  }
  return {std::move(ends[0]), std::move(ends[1])};
}

namespace {

struct Limit {
  decltype(RLIMIT_AS) resource;
  rlimit value;
  const char* option;
};

std::vector<Limit> limitsFor(const Settings& s) {
  std::vector<Limit> out;
  const auto add = [&](decltype(RLIMIT_AS) resource, const char* option, rlim_t soft, rlim_t hard) {
    // An unprivileged process cannot raise its hard limit: keep under the runtime's own.
    rlimit current{};
    if (::getrlimit(resource, &current) == 0 && current.rlim_max != RLIM_INFINITY) {
      hard = std::min(hard, current.rlim_max);
      soft = std::min(soft, hard);
    }
    out.push_back({resource, {soft, hard}, option});
  };
  if (s.memory) add(RLIMIT_AS, "memory", *s.memory, *s.memory);
  // SIGXCPU at the soft limit names the cause; SIGKILL a second later if it is caught.
  if (s.cpu_seconds) add(RLIMIT_CPU, "cpu_time", *s.cpu_seconds, *s.cpu_seconds + 1);
  if (s.open_files) add(RLIMIT_NOFILE, "open_files", *s.open_files, *s.open_files);
  return out;
}

}  // namespace

Spawned spawn(const Launch& launch, const std::vector<std::string>& args) {
  auto [in_read, in_write] = makePipe();
  auto [out_read, out_write] = makePipe();
  auto [err_read, err_write] = makePipe();
  auto [report_read, report_write] = makePipe();  // what failed in the child before exec

  // Everything the child needs is prepared here: between fork and execve the child makes
  // only async-signal-safe calls, since another thread may hold a lock (malloc's) forever.
  std::vector<char*> argv, envp;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : launch.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::vector<Limit> limits = limitsFor(launch.settings);
  const char* cwd = launch.settings.cwd.empty() ? nullptr : launch.settings.cwd.c_str();
  const char* program = launch.program.c_str();
  sigset_t no_signals;
  sigemptyset(&no_signals);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  enum Stage : int { kSetUpFds, kChangeDir, kSetLimit, kExec };
  const int in_fd = in_read.get(), out_fd = out_write.get(), err_fd = err_write.get();
  const bool on_fds = launch.channel_on_fds_3_4;
  // The report pipe's write end, above every descriptor the child sets up.
  Fd report_high(::fcntl(report_write.get(), F_DUPFD_CLOEXEC, kHighFd));
  if (report_high.get() < 0) throw std::runtime_error("cannot move a descriptor: " + errnoText(errno));
  report_write.reset();
  const int report = report_high.get();

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot fork: " + errnoText(errno));
  if (pid == 0) {
    const auto fail = [report](int stage, int index) {
      const int words[3] = {stage, index, errno};
      [[maybe_unused]] ssize_t ignored = ::write(report, words, sizeof words);
      ::_exit(127);
    };
    ::sigaction(SIGPIPE, &default_action, nullptr);
    ::sigprocmask(SIG_SETMASK, &no_signals, nullptr);
    // A process group of its own: a terminal's Ctrl-C reaches the runtime, which cancels
    // the calls itself; and SIGKILL to the group also ends what the plugin started.
    ::setpgid(0, 0);
    if (!on_fds) {
      if (::dup2(in_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0) fail(kSetUpFds, 0);
      // Descriptors the runtime opened without O_CLOEXEC stay out of the child.
      ::close_range(3, static_cast<unsigned>(report) - 1, 0);
      ::close_range(static_cast<unsigned>(report) + 1, ~0U, 0);
    } else {
      // Out of the way of 0-4 first (any of the pipes may be one of them), then in place.
      const int in = ::fcntl(in_fd, F_DUPFD, kHighFd), out = ::fcntl(out_fd, F_DUPFD, kHighFd),
                err = ::fcntl(err_fd, F_DUPFD, kHighFd), null = ::open("/dev/null", O_RDONLY);
      if (in < 0 || out < 0 || err < 0 || null < 0 || ::dup2(null, 0) < 0 || ::dup2(err, 1) < 0 ||
          ::dup2(err, 2) < 0 || ::dup2(in, 3) < 0 || ::dup2(out, 4) < 0) {
        fail(kSetUpFds, 0);
      }
      ::close_range(5, static_cast<unsigned>(report) - 1, 0);
      ::close_range(static_cast<unsigned>(report) + 1, ~0U, 0);
    }
    if (cwd != nullptr && ::chdir(cwd) != 0) fail(kChangeDir, 0);
    for (std::size_t i = 0; i < limits.size(); ++i) {
      if (::setrlimit(limits[i].resource, &limits[i].value) != 0)
        fail(kSetLimit, static_cast<int>(i));
    }
    ::execve(program, argv.data(), envp.data());
    fail(kExec, 0);
  }

  in_read.reset();
  out_write.reset();
  err_write.reset();
  report_high.reset();
  int words[3];
  ssize_t n;
  do {
    n = ::read(report_read.get(), words, sizeof words);  // end of file: execve succeeded
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof words)) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    const std::string why = errnoText(words[2]);
    switch (words[0]) {
      case kChangeDir:
        throw std::runtime_error("cannot change to the directory '" + launch.settings.cwd +
                                 "' (option 'cwd'): " + why);
      case kSetLimit:
        throw std::runtime_error(std::string("cannot set the limit of option '") +
                                 limits.at(words[1]).option + "': " + why);
      case kExec: {
        std::string hint;
        if (words[2] == ENOMEM && launch.settings.memory) {
          hint = " (option 'memory' limits it to " + launch.settings.memory_text +
                 "; that is too small)";
        }
        throw std::runtime_error("cannot run " + launch.program + ": " + why + hint);
      }
      default:
        throw std::runtime_error("cannot set up the child's stdin, stdout and stderr: " + why);
    }
  }
  ::fcntl(in_write.get(), F_SETFL, ::fcntl(in_write.get(), F_GETFL) | O_NONBLOCK);
  return {pid, std::move(in_write), std::move(out_read), std::move(err_read)};
}

int runToEnd(const std::vector<std::string>& argv, Millis timeout) {
  if (argv.empty()) return -1;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  const auto deadline = Clock::now() + timeout;
  Millis pause{1};
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (done < 0 && errno != EINTR) return -1;
    if (Clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      return -1;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, Millis(50));
  }
}

}  // namespace plugboard::process_deployer

#include "plugboard/host/spawn.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <thread>

extern char** environ;

namespace plugboard::host {

namespace fs = std::filesystem;
using Millis = std::chrono::milliseconds;

namespace {

std::string errnoText(int err) { return std::error_code(err, std::generic_category()).message(); }

// Where the child parks descriptors while it puts others in place.
constexpr int kHighFd = 64;

}  // namespace

std::vector<std::string> environmentWith(const std::map<std::string, std::string>& added) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (added.count(std::string(entry.substr(0, entry.find('=')))) == 0) env.emplace_back(entry);
  }
  for (const auto& [name, value] : added) env.push_back(name + "=" + value);
  return env;
}

void ignoreSigpipe() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) return;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, nullptr);
}

Expected<std::pair<Fd, Fd>> makePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Error("cannot create a pipe: " + errnoText(errno));
  Fd ends[2] = {Fd(fds[0]), Fd(fds[1])};
  for (Fd& end : ends) {
    if (end.get() > 2) continue;
    const int moved = ::fcntl(end.get(), F_DUPFD_CLOEXEC, 3);
    if (moved < 0) return Error("cannot create a pipe: " + errnoText(errno));
    end = Fd(moved);
  }
  return std::pair<Fd, Fd>(std::move(ends[0]), std::move(ends[1]));
}

namespace {

// `limits` kept under this process's hard limits.
std::vector<Limit> clamped(std::vector<Limit> limits) {
  for (Limit& l : limits) {
    rlimit current{};
    if (::getrlimit(static_cast<__rlimit_resource_t>(l.resource), &current) == 0 &&
        current.rlim_max != RLIM_INFINITY) {
      l.hard = std::min(l.hard, current.rlim_max);
      l.soft = std::min(l.soft, l.hard);
    }
  }
  return limits;
}

}  // namespace

Expected<Spawned> spawn(const SpawnOptions& options) {
  auto in_pipe = makePipe(), out_pipe = makePipe(), err_pipe = makePipe();
  auto report_pipe = makePipe();  // what failed in the child before exec
  for (const auto* p : {&in_pipe, &out_pipe, &err_pipe, &report_pipe}) {
    if (!*p) return p->error();
  }
  auto& [in_read, in_write] = *in_pipe;
  auto& [out_read, out_write] = *out_pipe;
  auto& [err_read, err_write] = *err_pipe;
  auto& [report_read, report_write] = *report_pipe;

  // Everything the child needs is prepared here: between fork and execve the child makes
  // only async-signal-safe calls, since another thread may hold a lock (malloc's) forever.
  std::vector<char*> argv, envp;
  for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : options.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::vector<Limit> limits = clamped(options.limits);
  std::vector<rlimit> values;
  for (const Limit& l : limits) values.push_back({l.soft, l.hard});
  const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  const char* program = options.program.c_str();
  sigset_t no_signals;
  sigemptyset(&no_signals);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  enum Stage : int { kSetUpFds, kChangeDir, kSetLimit, kExec };
  const int in_fd = in_read.get(), out_fd = out_write.get(), err_fd = err_write.get();
  const bool on_fds = options.channel_on_fds_3_4;
  const int pass_fd = options.pass_fd, pass_as = options.pass_fd_as;
  if (pass_fd >= 0 && (pass_as < (on_fds ? 5 : 3) || pass_as >= kHighFd)) {
    return Error("cannot pass descriptor " + std::to_string(pass_fd) + " to the child as " +
                 std::to_string(pass_as) + ": that number is taken or too high");
  }
  // The child keeps 0-2, the channel (3 and 4) and the passed descriptor; all others close.
  const int first_closed = on_fds ? 5 : 3;
  // The report pipe's write end, above every descriptor the child sets up.
  Fd report_high(::fcntl(report_write.get(), F_DUPFD_CLOEXEC, kHighFd));
  if (report_high.get() < 0) return Error("cannot move a descriptor: " + errnoText(errno));
  report_write.reset();
  const int report = report_high.get();

  const pid_t pid = ::fork();
  if (pid < 0) return Error("cannot fork: " + errnoText(errno));
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
    // The passed descriptor out of the way of those set up below (it may be one of them).
    const int passed = pass_fd >= 0 ? ::fcntl(pass_fd, F_DUPFD, kHighFd) : -1;
    if (pass_fd >= 0 && passed < 0) fail(kSetUpFds, 0);
    if (!on_fds) {
      if (::dup2(in_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0)
        fail(kSetUpFds, 0);
    } else {
      // Out of the way of 0-4 first (any of the pipes may be one of them), then in place.
      const int in = ::fcntl(in_fd, F_DUPFD, kHighFd), out = ::fcntl(out_fd, F_DUPFD, kHighFd),
                err = ::fcntl(err_fd, F_DUPFD, kHighFd), null = ::open("/dev/null", O_RDONLY);
      if (in < 0 || out < 0 || err < 0 || null < 0 || ::dup2(null, 0) < 0 || ::dup2(err, 1) < 0 ||
          ::dup2(err, 2) < 0 || ::dup2(in, 3) < 0 || ::dup2(out, 4) < 0) {
        fail(kSetUpFds, 0);
      }
    }
    if (passed >= 0 && ::dup2(passed, pass_as) < 0) fail(kSetUpFds, 0);  // not close-on-exec
    // Descriptors the runtime opened without O_CLOEXEC stay out of the child.
    if (passed < 0) {
      ::close_range(static_cast<unsigned>(first_closed), static_cast<unsigned>(report) - 1, 0);
    } else {
      if (pass_as > first_closed)
        ::close_range(static_cast<unsigned>(first_closed), static_cast<unsigned>(pass_as) - 1, 0);
      ::close_range(static_cast<unsigned>(pass_as) + 1, static_cast<unsigned>(report) - 1, 0);
    }
    ::close_range(static_cast<unsigned>(report) + 1, ~0U, 0);
    if (cwd != nullptr && ::chdir(cwd) != 0) fail(kChangeDir, 0);
    for (std::size_t i = 0; i < limits.size(); ++i) {
      if (::setrlimit(static_cast<__rlimit_resource_t>(limits[i].resource), &values[i]) != 0)
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
        return Error("cannot change to the directory '" + options.cwd + "'" +
                     (options.cwd_what.empty() ? "" : " (" + options.cwd_what + ")") + ": " + why);
      case kSetLimit:
        return Error("cannot set the limit of " + limits.at(words[1]).what + ": " + why);
      case kExec: {
        std::string hint;
        for (const Limit& l : limits) {
          if (words[2] == ENOMEM && l.resource == RLIMIT_AS) {
            hint = " (" + l.what + " limits it to " + l.shown + "; that is too small)";
          }
        }
        return Error("cannot run " + options.program + ": " + why + hint);
      }
      default:
        return Error("cannot set up the child's stdin, stdout and stderr: " + why);
    }
  }
  ::fcntl(in_write.get(), F_SETFL, ::fcntl(in_write.get(), F_GETFL) | O_NONBLOCK);
  Spawned spawned;
  spawned.pid = pid;
  spawned.in = std::move(in_write);
  spawned.out = std::move(out_read);
  spawned.err = std::move(err_read);
  return spawned;
}

int runToEnd(const std::vector<std::string>& argv, Millis timeout) {
  using Clock = std::chrono::steady_clock;
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

}  // namespace plugboard::host

namespace plugboard::host {
namespace {

bool isExecutableFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<std::string> findExecutable(const std::string& path_or_name) {
  if (path_or_name.find('/') != std::string::npos) {
    if (isExecutableFile(path_or_name))
      return fs::absolute(path_or_name).lexically_normal().string();
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "";
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / path_or_name;
    if (isExecutableFile(candidate)) return fs::absolute(candidate).string();
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

std::string moduleDirectory() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&moduleDirectory), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  std::error_code ec;
  fs::path file = fs::canonical(info.dli_fname, ec);
  if (ec) file = fs::absolute(info.dli_fname, ec);
  return file.parent_path().string();
}

}  // namespace plugboard::host

// process: runs each plugin .so in a child process of its own, so that a plugin that
// crashes, hangs or breaks the protocol takes only its child down, never the runtime.
//
// Artifact: {"path": "/abs/plugin.so"}. The child is plugboard-host (tools/plugboard-host),
// which serves the plugin over protocol v1 (docs/protocol.md) on its stdin and stdout.
// Options (the deployer's config gives defaults, a step's options override them) are
// described in the manifest at the bottom and in docs/deployers.md.
//
// One long-lived child per handle, with several calls in flight. Per child, a reader
// thread matches results to the waiting calls and forwards log lines, and a second thread
// keeps the tail of the child's stderr for error messages. When the child dies or breaks
// the protocol, every call in flight ends with an Error that names the plugin, the cause
// and that tail; the next call starts a new child, with backoff after repeated failures.
//
// SIGPIPE: a write to a child that has died raises SIGPIPE, whose default action would
// end the runtime. setUp() sets it to SIG_IGN if it is still SIG_DFL (a runtime that
// installed a handler of its own keeps it); writes then fail with EPIPE and the reader
// thread reports the death. Children start with SIGPIPE at SIG_DFL and no signal blocked.
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <plugboard/deployer.hpp>

#include "core/duration.h"
#include "core/protocol.h"
#include "core/text.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using plugboard::Json;
using plugboard::Result;
using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

constexpr const char* kHostName = "plugboard-host";
constexpr std::size_t kStderrTailBytes = 4096;
constexpr std::size_t kStderrTailLines = 20;
constexpr std::size_t kStderrLogLine = 4096;  // longer stderr lines are logged in pieces
constexpr Millis kShutdownGrace{2000};        // after `shutdown`, before SIGKILL
constexpr Millis kWriteStall{10000};          // a child that reads nothing for this long hangs
constexpr Millis kStderrDrain{200};           // for a dead child's last words on stderr
constexpr Millis kFirstBackoff{100};
constexpr Millis kMaxBackoff{5000};
constexpr std::chrono::microseconds kYieldFor{200};  // a caller yields this long before sleeping

std::string errnoText(int err) { return std::error_code(err, std::generic_category()).message(); }

// ---------------------------------------------------------------------------------------
// Options

struct Settings {
  std::string host;                   // empty: next to this module, else PATH
  std::optional<rlim_t> memory;       // RLIMIT_AS, bytes
  std::string memory_text;            // as the user wrote it
  std::optional<rlim_t> cpu_seconds;  // RLIMIT_CPU
  std::optional<rlim_t> open_files;   // RLIMIT_NOFILE
  std::map<std::string, std::string> env;
  std::string cwd;
  std::optional<Json> config;
  Millis cancel_grace{1000};
  Millis start_timeout{10000};
};

// "256M", "1GiB", "512k", "4096", 4096: binary multiples (1K = 1024 bytes).
std::optional<std::uint64_t> parseSize(const Json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) {
    const auto n = v.get<std::int64_t>();
    return n < 0 ? std::nullopt : std::optional<std::uint64_t>(n);
  }
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  std::uint64_t n = 0;
  std::size_t i = 0;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    const unsigned digit = s[i] - '0';
    if (n > (UINT64_MAX - digit) / 10) return std::nullopt;
    n = n * 10 + digit;
  }
  if (i == 0) return std::nullopt;
  const std::string unit = plugboard::core::toLower(s.substr(i));
  if (unit.empty() || unit == "b") return n;
  const auto power = std::string_view("kmgt").find(unit[0]);
  const std::string suffix = unit.substr(1);
  if (power == std::string_view::npos || (suffix != "" && suffix != "b" && suffix != "ib")) {
    return std::nullopt;
  }
  const unsigned shift = 10 * static_cast<unsigned>(power + 1);
  if (n > (UINT64_MAX >> shift)) return std::nullopt;
  return n << shift;
}

// Reads `options` over `s`: each key present replaces the value in `s`, except "env",
// whose variables are added to (or replace) those already there. Throws
// std::invalid_argument naming the option.
void applyOptions(Settings& s, const Json& options) {
  if (!options.is_object()) throw std::invalid_argument("the options must be a JSON object");
  for (const auto& [key, value] : options.items()) {
    const auto must = [&](const std::string& what) {
      return std::invalid_argument("option '" + key + "' must be " + what + ", got " +
                                   value.dump());
    };
    const auto duration = [&] {
      auto d = value.is_string() ? plugboard::core::parseDuration(value.get<std::string>())
                                 : plugboard::core::Expected<Millis>(plugboard::core::Error(""));
      if (!d || d->count() < 0) throw must("a duration such as 30s");
      return *d;
    };
    if (key == "host" || key == "cwd") {
      if (!value.is_string() || value.get_ref<const std::string&>().empty()) {
        throw must("a non-empty path");
      }
      (key == "host" ? s.host : s.cwd) = value.get<std::string>();
    } else if (key == "memory") {
      const auto bytes = parseSize(value);
      if (!bytes || *bytes == 0) throw must("a size such as 256M or a number of bytes");
      s.memory = *bytes;
      s.memory_text = value.is_string() ? value.get<std::string>() : std::to_string(*bytes);
    } else if (key == "cpu_time") {
      const Millis d = duration();
      if (d.count() == 0) throw must("a positive duration");
      s.cpu_seconds = static_cast<rlim_t>((d.count() + 999) / 1000);
    } else if (key == "open_files") {
      if (!value.is_number_integer() || value.get<long long>() <= 0)
        throw must("a positive integer");
      s.open_files = static_cast<rlim_t>(value.get<long long>());
    } else if (key == "env") {
      if (!value.is_object()) throw must("a table of strings");
      for (const auto& [name, text] : value.items()) {
        if (!text.is_string()) throw must("a table of strings");
        if (name.empty() || name.find('=') != std::string::npos) {
          throw std::invalid_argument("option 'env' names an invalid variable '" + name + "'");
        }
        s.env[name] = text.get<std::string>();
      }
    } else if (key == "config") {
      if (!value.is_object()) throw must("an object");
      s.config = value;
    } else if (key == "cancel_grace") {
      s.cancel_grace = duration();
    } else if (key == "start_timeout") {
      s.start_timeout = duration();
      if (s.start_timeout.count() == 0) throw must("a positive duration");
    } else {
      throw std::invalid_argument("unknown option '" + key + "'");
    }
  }
}

// ---------------------------------------------------------------------------------------
// Finding plugboard-host

bool isExecutableFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::optional<fs::path> searchPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "";
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (isExecutableFile(candidate)) return fs::absolute(candidate);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

// The directory this module's file is in, symbolic links resolved (a deployer directory
// may hold a link to the installed module); empty if unknown.
fs::path moduleDir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&moduleDir), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  std::error_code ec;
  fs::path file = fs::canonical(info.dli_fname, ec);
  if (ec) file = fs::absolute(info.dli_fname, ec);
  return file.parent_path();
}

// plugboard-host where the build or an install puts it relative to this module:
// <build>/deployers/process.so and <build>/plugboard-host, or
// <prefix>/lib[/<arch>]/plugboard/deployers/process.so and <prefix>/bin/plugboard-host;
// else the first in PATH. Empty when there is none.
std::string defaultHost() {
  if (fs::path dir = moduleDir(); !dir.empty()) {
    if (isExecutableFile(dir.parent_path() / kHostName))
      return (dir.parent_path() / kHostName).string();
    for (int up = 0; up < 4 && dir.has_relative_path(); ++up) {
      dir = dir.parent_path();
      if (isExecutableFile(dir / "bin" / kHostName)) return (dir / "bin" / kHostName).string();
    }
  }
  if (auto found = searchPath(kHostName)) return found->string();
  return {};
}

std::string resolveHost(const std::string& option, const std::string& fallback) {
  if (option.empty()) {
    if (fallback.empty()) {
      throw std::runtime_error(std::string("cannot find ") + kHostName +
                               " next to the process deployer (" + moduleDir().string() +
                               ") or in PATH; set the deployer's option 'host'");
    }
    return fallback;
  }
  if (option.find('/') != std::string::npos)
    return fs::absolute(option).lexically_normal().string();
  if (auto found = searchPath(option)) return found->string();
  throw std::runtime_error("cannot find '" + option + "' (option 'host') in PATH");
}

// Sets SIGPIPE to SIG_IGN unless the runtime chose its own disposition. See the top.
void ignoreSigpipe() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) return;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, nullptr);
}

// ---------------------------------------------------------------------------------------
// Starting a child

// How to start one plugin's child; built once per open(), shared by its restarts.
struct Launch {
  std::string plugin;  // the .so, absolute
  std::string host;    // plugboard-host, absolute
  Settings settings;
  std::vector<std::string> argv;
  std::vector<std::string> env;  // NAME=value: the runtime's environment plus option 'env'
  plugboard::Logger log;
};

std::shared_ptr<const Launch> makeLaunch(std::string plugin, std::string host, Settings settings,
                                         plugboard::Logger log) {
  auto launch = std::make_shared<Launch>();
  launch->argv = {host, plugin};
  if (settings.config) {
    launch->argv.push_back("--config");
    launch->argv.push_back(settings.config->dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (settings.env.count(std::string(entry.substr(0, entry.find('=')))) == 0) {
      launch->env.emplace_back(entry);
    }
  }
  for (const auto& [name, value] : settings.env) launch->env.push_back(name + "=" + value);
  launch->plugin = std::move(plugin);
  launch->host = std::move(host);
  launch->settings = std::move(settings);
  launch->log = log;
  return launch;
}

// Owns one file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// A pipe {read end, write end}, both close-on-exec and above 2, so that dup2() onto 0-2
// in the child never lands on another end.
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

struct Spawned {
  pid_t pid = -1;
  Fd in, out, err;  // the child's stdin (ours to write), stdout and stderr (ours to read)
};

// Starts the host with fork and execve. Throws std::runtime_error saying what failed
// (in the child: setting it up, changing directory, a limit, or execve itself).
Spawned spawn(const Launch& launch) {
  auto [in_read, in_write] = makePipe();
  auto [out_read, out_write] = makePipe();
  auto [err_read, err_write] = makePipe();
  auto [report_read, report_write] = makePipe();  // what failed in the child before exec

  // Everything the child needs is prepared here: between fork and execve the child makes
  // only async-signal-safe calls, since another thread may hold a lock (malloc's) forever.
  std::vector<char*> argv, envp;
  for (const auto& a : launch.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : launch.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::vector<Limit> limits = limitsFor(launch.settings);
  const char* cwd = launch.settings.cwd.empty() ? nullptr : launch.settings.cwd.c_str();
  const char* host = launch.host.c_str();
  sigset_t no_signals;
  sigemptyset(&no_signals);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  enum Stage : int { kSetUpFds, kChangeDir, kSetLimit, kExec };
  const int in_fd = in_read.get(), out_fd = out_write.get(), err_fd = err_write.get();
  const int report = report_write.get();

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
    if (::dup2(in_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0) fail(kSetUpFds, 0);
    // Descriptors the runtime opened without O_CLOEXEC stay out of the child.
    ::close_range(3, static_cast<unsigned>(report) - 1, 0);
    ::close_range(static_cast<unsigned>(report) + 1, ~0U, 0);
    if (cwd != nullptr && ::chdir(cwd) != 0) fail(kChangeDir, 0);
    for (std::size_t i = 0; i < limits.size(); ++i) {
      if (::setrlimit(limits[i].resource, &limits[i].value) != 0)
        fail(kSetLimit, static_cast<int>(i));
    }
    ::execve(host, argv.data(), envp.data());
    fail(kExec, 0);
  }

  in_read.reset();
  out_write.reset();
  err_write.reset();
  report_write.reset();
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
        throw std::runtime_error("cannot run " + launch.host + ": " + why + hint);
      }
      default:
        throw std::runtime_error("cannot set up the child's stdin, stdout and stderr: " + why);
    }
  }
  ::fcntl(in_write.get(), F_SETFL, ::fcntl(in_write.get(), F_GETFL) | O_NONBLOCK);
  return {pid, std::move(in_write), std::move(out_read), std::move(err_read)};
}

std::string signalName(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "unknown signal";
}

std::string describeStatus(int status, const Settings& s) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    std::string out =
        "crashed: killed by signal " + std::to_string(sig) + " (" + signalName(sig) + ")";
    if (sig == SIGXCPU && s.cpu_seconds) {
      out += ": it used up its CPU time (option 'cpu_time' allows " +
             std::to_string(*s.cpu_seconds) + "s)";
    }
    return out;
  }
  return "ended with wait status " + std::to_string(status);
}

// The last lines of `text` (the end of a child's stderr) on one line, " | " between them.
// `cut` says the text starts in the middle of a line, which is then dropped.
std::string tailOf(std::string_view text, bool cut) {
  if (cut) {
    const auto nl = text.find('\n');
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  }
  std::vector<std::string> lines;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string line(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    for (char& c : line) {
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (!line.empty()) lines.push_back(std::move(line));
  }
  if (lines.size() > kStderrTailLines) lines.erase(lines.begin(), lines.end() - kStderrTailLines);
  return plugboard::core::join(lines, " | ", "");
}

// ---------------------------------------------------------------------------------------
// One child process

// A running plugboard-host and the calls in flight in it. Thread-safe.
class Child {
 public:
  // Starts the plugin's child and completes the hello. Throws std::runtime_error naming
  // the plugin file and why it did not start (exit code or signal, and stderr's tail).
  static std::shared_ptr<Child> start(std::shared_ptr<const Launch> launch);
  // Sends `shutdown`, closes the child's input, kills it if it has not exited within 2 s,
  // reaps it and joins the threads. REQUIRES: no call is waiting in this child.
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  const Json& manifest() const { return manifest_; }
  // The plugin's name from its manifest (empty if it has none).
  const std::string& name() const { return name_; }
  // False once the child has ended or is being killed.
  bool alive() const;
  // Registers call `id` before its execute frame goes out; false, with the reason in
  // `error`, when the child has already ended.
  bool begin(std::uint64_t id, std::string& error);
  // REQUIRES: begin(id) succeeded; `request` is one JSON object.
  void sendExecute(std::uint64_t id, std::string_view request);
  // Asks call `id` to stop; unless it answers within the cancel grace, kills the child.
  void cancel(std::uint64_t id);
  struct Answer {
    std::string result;     // result JSON text
    bool answered = false;  // false: the child died and `result` is an Error saying why
  };
  // Blocks until call `id` ends. REQUIRES: begin(id) succeeded.
  Answer wait(std::uint64_t id);

 private:
  struct Call {
    bool done = false;
    bool answered = false;
    std::string result;
    std::optional<Clock::time_point> kill_at;  // set by cancel()
  };

  Child(std::shared_ptr<const Launch> launch, Spawned spawned, std::pair<Fd, Fd> wake);
  void readFrames();  // the reader thread
  void readStderr();  // the stderr thread
  // Handles one frame from the child; returns the protocol error, if any.
  std::string handleLine(const std::string& line);
  void reap();
  void finish();
  // Kills the child (and its process group), recording `cause` unless one is recorded.
  void killFor(const std::string& cause);
  bool send(const std::string& frame);
  void closeInput();
  enum class Ready { kData, kExited, kStop };
  Ready waitReadable(int fd, int exit_fd = -1);
  void wake();
  std::string who() const;

  const std::shared_ptr<const Launch> launch_;
  const pid_t pid_;
  const std::string label_;  // the plugin file's stem, for stderr lines in the log
  Fd in_, out_, err_, wake_read_, wake_write_;
  std::thread reader_, stderr_reader_;

  std::mutex write_mu_;  // one frame at a time on in_; taken before mu_, never after

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::uint64_t, Call> calls_;  // calls in flight
  bool greeted_ = false;
  Json manifest_;     // written once by the reader, before greeted_
  std::string name_;  // the plugin's name, from manifest_
  bool closing_ = false;
  std::string kill_cause_;  // why we killed it; empty if we did not
  bool reaped_ = false;     // pid_ may be recycled: never signal it again
  std::optional<int> status_;
  bool ended_ = false;  // reaped, and every call in flight ended
  std::string end_cause_, end_tail_;
  std::string stderr_tail_;
  bool stderr_cut_ = false;
  bool stderr_eof_ = false;
};

Child::Child(std::shared_ptr<const Launch> launch, Spawned spawned, std::pair<Fd, Fd> wake)
    : launch_(std::move(launch)),
      pid_(spawned.pid),
      label_(fs::path(launch_->plugin).stem().string()),
      in_(std::move(spawned.in)),
      out_(std::move(spawned.out)),
      err_(std::move(spawned.err)),
      wake_read_(std::move(wake.first)),
      wake_write_(std::move(wake.second)) {}

std::shared_ptr<Child> Child::start(std::shared_ptr<const Launch> launch) {
  const auto failed = [&](const std::string& why) {
    return std::runtime_error("plugin " + launch->plugin + " did not start: " + why);
  };
  std::shared_ptr<Child> child;
  try {
    auto wake = makePipe();
    child.reset(new Child(launch, spawn(*launch), std::move(wake)));
    child->reader_ = std::thread(&Child::readFrames, child.get());
    child->stderr_reader_ = std::thread(&Child::readStderr, child.get());
  } catch (const std::exception& e) {
    throw failed(e.what());
  }
  child->send(plugboard::core::frame(
      {{"type", "hello"}, {"protocols", {plugboard::core::kProtocolVersion}}}));

  const Millis timeout = launch->settings.start_timeout;
  std::unique_lock lock(child->mu_);
  if (!child->cv_.wait_for(lock, timeout, [&] { return child->greeted_ || child->ended_; })) {
    lock.unlock();
    child->killFor("did not answer 'hello' within " + plugboard::core::formatGoDuration(timeout));
    lock.lock();
    child->cv_.wait(lock, [&] { return child->ended_; });
  }
  if (child->ended_) {
    std::string why = fs::path(launch->host).filename().string() + " " + child->end_cause_;
    if (child->kill_cause_.empty() && launch->settings.memory) {
      why += " (option 'memory' limits it to " + launch->settings.memory_text +
             "; is that too small?)";
    }
    if (!child->end_tail_.empty()) why += ": " + child->end_tail_;
    lock.unlock();
    throw failed(why);
  }
  return child;
}

Child::~Child() {
  if (!reader_.joinable()) {  // start() failed before the reader ran: reap here
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    return;
  }
  bool ended;
  {
    std::lock_guard lock(mu_);
    closing_ = true;
    ended = ended_;
  }
  if (!ended) send(plugboard::core::frame({{"type", "shutdown"}}));
  closeInput();
  {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, kShutdownGrace, [&] { return ended_; })) {
      lock.unlock();
      killFor("");
    }
  }
  wake();
  reader_.join();
  if (stderr_reader_.joinable()) stderr_reader_.join();
}

bool Child::alive() const {
  std::lock_guard lock(mu_);
  return !ended_ && kill_cause_.empty();
}

std::string Child::who() const {
  return "plugin " + (name_.empty() ? launch_->plugin : "'" + name_ + "'") + " (process)";
}

bool Child::begin(std::uint64_t id, std::string& error) {
  std::lock_guard lock(mu_);
  if (ended_) {
    error = who() + " " + end_cause_ + (end_tail_.empty() ? "" : "; stderr: " + end_tail_);
    return false;
  }
  if (!calls_.try_emplace(id).second) {
    error = who() + ": call " + std::to_string(id) + " is already in flight";
    return false;
  }
  return true;
}

void Child::sendExecute(std::uint64_t id, std::string_view request) {
  std::string f = R"({"type":"execute","id":)" + std::to_string(id) + R"(,"request":)";
  const std::size_t start = f.size();
  f.append(request);
  // Raw newlines in the request can only be whitespace between tokens (JSON strings
  // escape them); a frame must not contain any.
  std::replace_if(
      f.begin() + static_cast<std::ptrdiff_t>(start), f.end(),
      [](char c) { return c == '\n' || c == '\r'; }, ' ');
  f += "}\n";
  send(f);  // if the child is gone, the reader ends the call with the reason
}

void Child::cancel(std::uint64_t id) {
  {
    std::lock_guard lock(mu_);
    auto it = calls_.find(id);
    if (it == calls_.end() || it->second.done) return;
    if (!it->second.kill_at) {
      it->second.kill_at = Clock::now() + launch_->settings.cancel_grace;
      cv_.notify_all();
    }
  }
  send(plugboard::core::frame({{"type", "cancel"}, {"id", id}}));
}

Child::Answer Child::wait(std::uint64_t id) {
  std::unique_lock lock(mu_);
  Call& call = calls_.at(id);  // map nodes stay put; only this thread erases it
  // Most calls answer within a few tens of microseconds. Yielding the processor for that
  // long, instead of sleeping at once, lets the reader thread run here when the result
  // comes and spares this thread a wake-up from sleep: a third of a short call's time.
  for (const auto until = Clock::now() + kYieldFor; !call.done && Clock::now() < until;) {
    lock.unlock();
    sched_yield();
    lock.lock();
  }
  while (!call.done) {
    if (!call.kill_at) {
      cv_.wait(lock);
      continue;
    }
    if (cv_.wait_until(lock, *call.kill_at, [&] { return call.done; })) break;
    lock.unlock();
    killFor("did not answer a cancel within " +
            plugboard::core::formatGoDuration(launch_->settings.cancel_grace) + " and was killed");
    lock.lock();
    cv_.wait(lock, [&] { return call.done; });
  }
  Answer answer{std::move(call.result), call.answered};
  calls_.erase(id);
  return answer;
}

void Child::killFor(const std::string& cause) {
  std::lock_guard lock(mu_);
  if (kill_cause_.empty() && !ended_) kill_cause_ = cause;
  if (!reaped_) {
    ::kill(-pid_, SIGKILL);  // its process group: the host and what the plugin started
    ::kill(pid_, SIGKILL);
  }
}

bool Child::send(const std::string& f) {
  std::lock_guard lock(write_mu_);
  std::size_t done = 0;
  while (done < f.size() && in_.get() >= 0) {
    const ssize_t n = ::write(in_.get(), f.data() + done, f.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{in_.get(), POLLOUT, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(kWriteStall.count()));
      if (ready == 0) {
        killFor("read none of its input for " + plugboard::core::formatGoDuration(kWriteStall) +
                " and was killed");
        return false;
      }
    } else if (n < 0 && errno != EINTR) {
      return false;  // EPIPE: the child is gone; the reader says why
    }
  }
  return done == f.size();
}

void Child::closeInput() {
  std::lock_guard lock(write_mu_);
  in_.reset();
}

void Child::wake() {
  [[maybe_unused]] ssize_t ignored =
      ::write(wake_write_.get(), "x", 1);  // never read: stays readable
}

// Waits until `fd` has data or is at its end (kData, first, so that what the child wrote
// before exiting is read), the child has exited (kExited; only with an `exit_fd`, a pidfd),
// or the destructor asks to stop (kStop).
Child::Ready Child::waitReadable(int fd, int exit_fd) {
  pollfd fds[3] = {{fd, POLLIN, 0}, {wake_read_.get(), POLLIN, 0}, {exit_fd, POLLIN, 0}};
  for (;;) {
    const int ready = ::poll(fds, exit_fd >= 0 ? 3 : 2, -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || fds[1].revents != 0) return Ready::kStop;
    if (fds[0].revents != 0) return Ready::kData;
    if (fds[2].revents != 0) return Ready::kExited;
  }
}

void Child::readFrames() {
  plugboard::core::FrameReader reader(plugboard::core::kDefaultFrameLimit);
  std::vector<std::string> lines;
  std::string problem;
  char buf[65536];
  // The end of output is not enough to see the child die: a process the plugin started
  // may hold the pipe. A pidfd (Linux 5.3) says when it exits; without one, EOF does.
  const Fd exit_fd(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));
  while (problem.empty() && waitReadable(out_.get(), exit_fd.get()) == Ready::kData) {
    const ssize_t n = ::read(out_.get(), buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;  // end of output: the child has exited (or closed it)
    lines.clear();
    if (auto st = reader.feed(std::string_view(buf, static_cast<std::size_t>(n)), lines); !st) {
      problem = st.error().message();
    }
    for (const auto& line : lines) {
      if (problem.empty()) problem = handleLine(line);
    }
  }
  if (!problem.empty()) killFor("broke the protocol: " + problem);
  reap();
  finish();
}

std::string Child::handleLine(const std::string& line) {
  auto message = plugboard::core::parseFrame(line, plugboard::core::Sender::kPlugin);
  if (!message) return message.error().message();
  Json& m = *message;
  const std::string& type = m["type"].get_ref<const std::string&>();
  if (type == "hello") {
    if (greeted_) return "it said 'hello' twice";
    if (m["protocol"] != plugboard::core::kProtocolVersion) {
      return "it chose protocol " + m["protocol"].dump() +
             ", which was not offered (this runtime speaks 1)";
    }
    std::lock_guard lock(mu_);
    manifest_ = std::move(m["manifest"]);
    const auto name = manifest_.find("name");
    name_ = name != manifest_.end() && name->is_string() ? name->get<std::string>() : "";
    greeted_ = true;
    cv_.notify_all();
    return "";
  }
  if (type == "result") {
    if (!greeted_) return "'result' before 'hello'";
    std::string text = m["result"].dump(-1, ' ', false, Json::error_handler_t::replace);
    std::lock_guard lock(mu_);
    auto it = calls_.find(m["id"].get<std::uint64_t>());
    if (it != calls_.end() && !it->second.done) {  // an unknown id is ignored (docs/protocol.md)
      it->second.done = it->second.answered = true;
      it->second.result = std::move(text);
      cv_.notify_all();
    }
    return "";
  }
  // "log", the only other type parseFrame admits from a plugin. It may come before hello:
  // plugboard-host forwards what a plugin logs while it loads.
  const std::string text =
      "[" + (greeted_ ? name_ : label_) + "] " + m["message"].get<std::string>();
  const std::string level = m.value("level", "info");
  if (level == "debug") {
    launch_->log.debug(text);
  } else if (level == "warn") {
    launch_->log.warn(text);
  } else if (level == "error") {
    launch_->log.error(text);
  } else {
    launch_->log.info(text);
  }
  return "";
}

void Child::readStderr() {
  char buf[4096];
  std::string line;  // an incomplete line, for the log
  const auto logLine = [&] {
    launch_->log.info("[" + label_ + "] stderr: " + line);
    line.clear();
  };
  while (waitReadable(err_.get()) == Ready::kData) {
    const ssize_t n = ::read(err_.get(), buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;
    const std::string_view bytes(buf, static_cast<std::size_t>(n));
    {
      std::lock_guard lock(mu_);
      stderr_tail_.append(bytes);
      if (stderr_tail_.size() > kStderrTailBytes) {
        stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailBytes);
        stderr_cut_ = true;
      }
    }
    for (char c : bytes) {
      if (c == '\n') {
        logLine();
      } else {
        line += c;
        if (line.size() >= kStderrLogLine) logLine();
      }
    }
  }
  if (!line.empty()) logLine();
  std::lock_guard lock(mu_);
  stderr_eof_ = true;
  cv_.notify_all();
}

// Waits for the child to exit without reaping it, so that killFor() can never signal a
// recycled pid; kills it if it lingers after closing its output. Then kills what is left
// of its process group (whatever the plugin started) and reaps it.
void Child::reap() {
  const auto deadline = Clock::now() + kShutdownGrace;
  Millis pause{1};
  bool killed = false;
  for (;;) {
    siginfo_t info{};
    const int rc = ::waitid(P_PID, pid_, &info, WEXITED | WNOWAIT | (killed ? 0 : WNOHANG));
    if (rc == 0 && info.si_pid == pid_) break;
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) break;  // ECHILD: reaped elsewhere (SIGCHLD ignored); the status is unknown
    if (Clock::now() >= deadline) {
      killFor("closed its output but did not exit");
      killed = true;
      continue;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, Millis(50));
  }
  std::lock_guard lock(mu_);
  ::kill(-pid_, SIGKILL);  // the exited leader, unreaped, keeps the group id ours
  int status = 0;
  pid_t reaped;
  do {
    reaped = ::waitpid(pid_, &status, 0);
  } while (reaped < 0 && errno == EINTR);
  if (reaped == pid_) status_ = status;
  reaped_ = true;
}

// Ends every call in flight with an Error that says why the child ended.
void Child::finish() {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, kStderrDrain, [&] { return stderr_eof_; });
  end_cause_ = !kill_cause_.empty() ? kill_cause_
               : closing_           ? "was shut down"
               : status_            ? describeStatus(*status_, launch_->settings)
                                    : "ended (its exit status is unknown)";
  end_tail_ = tailOf(stderr_tail_, stderr_cut_);
  const std::string message =
      who() + " " + end_cause_ + (end_tail_.empty() ? "" : "; stderr: " + end_tail_);
  for (auto& [id, call] : calls_) {
    if (call.done) continue;
    call.done = true;
    call.result = Result::Error(message).toText();
  }
  ended_ = true;
  const bool report = greeted_ && !closing_;
  cv_.notify_all();
  lock.unlock();
  if (report) launch_->log.warn(message + "; the next call starts it again");
}

// ---------------------------------------------------------------------------------------
// The handle: one plugin, restarted after its child dies

class ProcessHandle : public plugboard::Handle {
 public:
  ProcessHandle(std::shared_ptr<const Launch> launch, std::shared_ptr<Child> child)
      : launch_(std::move(launch)),
        who_("plugin '" + child->name() + "' (process)"),
        child_(std::move(child)) {}

  std::string execute(std::uint64_t call_id, std::string_view request) override {
    if (request.find('{') != request.find_first_not_of(" \t\r\n") || !Json::accept(request)) {
      return Result::Error(who_ + ": the request is not a JSON object").toText();
    }
    {
      std::lock_guard lock(mu_);
      if (!calls_.emplace(call_id, false).second) {
        return Result::Error(who_ + ": call " + std::to_string(call_id) + " is already in flight")
            .toText();
      }
    }
    std::string result = run(call_id, request);
    std::lock_guard lock(mu_);
    calls_.erase(call_id);
    return result;
  }

  void cancel(std::uint64_t call_id) override {
    std::shared_ptr<Child> child;
    {
      std::lock_guard lock(mu_);
      auto it = calls_.find(call_id);
      if (it == calls_.end()) return;
      it->second = true;
      cv_.notify_all();
      child = child_;
    }
    if (child) child->cancel(call_id);
  }

 private:
  std::string run(std::uint64_t id, std::string_view request) {
    std::string error;
    std::shared_ptr<Child> child = running(id, error);
    if (!child || !child->begin(id, error)) return Result::Error(error).toText();
    child->sendExecute(id, request);
    // A cancel that came before begin() found no call in the child: repeat it.
    if (cancelAsked(id)) child->cancel(id);
    Child::Answer answer = child->wait(id);
    if (answer.answered) {
      std::lock_guard lock(mu_);
      failures_ = 0;
    }
    return std::move(answer.result);
  }

  bool cancelAsked(std::uint64_t id) {
    std::lock_guard lock(mu_);
    return calls_.at(id);
  }

  // 0 for the first restart after an answered call, then 100 ms, 200 ms, 400 ms ... 5 s.
  static Millis backoff(int failures) {
    if (failures == 0) return Millis(0);
    if (failures > 7) return kMaxBackoff;
    return std::min(kFirstBackoff * (1 << (failures - 1)), kMaxBackoff);
  }

  // The child to run call `id` in, started again if it died; null with `error` set when
  // it cannot be started or the call was cancelled while waiting for it.
  std::shared_ptr<Child> running(std::uint64_t id, std::string& error) {
    std::unique_lock lock(mu_);
    const std::uint64_t attempts_seen = attempts_;
    // A call cancelled before it was sent still goes out (run() repeats the cancel),
    // unless it would have to wait for a restart.
    cv_.wait(lock, [&] { return !restarting_ || calls_.at(id); });
    if (restarting_) {
      error = who_ + ": the call was cancelled while the plugin was being started again";
      return nullptr;
    }
    if (child_ && child_->alive()) return child_;
    if (attempts_ != attempts_seen && !last_failure_.empty()) {  // the restart it waited for failed
      error = last_failure_;
      return nullptr;
    }
    restarting_ = true;
    const Millis delay = backoff(failures_++);
    if (cv_.wait_for(lock, delay, [&] { return calls_.at(id); })) {
      restarting_ = false;
      cv_.notify_all();
      error = who_ + ": the call was cancelled while the plugin was being started again";
      return nullptr;
    }
    std::shared_ptr<Child> dead = std::move(child_);
    lock.unlock();
    dead.reset();
    std::shared_ptr<Child> fresh;
    std::string why;
    try {
      fresh = Child::start(launch_);
    } catch (const std::exception& e) {
      why = e.what();
    }
    lock.lock();
    restarting_ = false;
    ++attempts_;
    cv_.notify_all();
    if (!fresh) {
      last_failure_ = who_ + " could not be started again: " + why;
      error = last_failure_;
      launch_->log.warn(last_failure_);
      return nullptr;
    }
    last_failure_.clear();
    launch_->log.info(
        who_ + " started again" +
        (delay.count() > 0 ? " after " + plugboard::core::formatGoDuration(delay) : ""));
    child_ = fresh;
    return fresh;
  }

  const std::shared_ptr<const Launch> launch_;
  const std::string who_;  // "plugin 'name' (process)"
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<Child> child_;
  std::map<std::uint64_t, bool> calls_;  // calls in execute(): id -> cancel asked
  bool restarting_ = false;
  int failures_ = 0;            // restarts since the last answered call
  std::uint64_t attempts_ = 0;  // restarts tried
  std::string last_failure_;    // of the last restart; empty if it worked
};

// ---------------------------------------------------------------------------------------
// The deployer

class ProcessDeployer : public plugboard::Deployer {
 public:
  void setUp(const Json& config) override {
    ignoreSigpipe();
    applyOptions(defaults_, config);
    default_host_ = defaultHost();
  }

  plugboard::Deployed open(const Json& artifact, const Json& options) override {
    const auto path = artifact.find("path");
    if (path == artifact.end() || !path->is_string() ||
        path->get_ref<const std::string&>().empty()) {
      throw std::invalid_argument("the artifact has no 'path' to a plugin .so");
    }
    Settings settings = defaults_;
    applyOptions(settings, options);
    std::string host = resolveHost(settings.host, default_host_);
    auto launch = makeLaunch(fs::absolute(path->get<std::string>()).string(), std::move(host),
                             std::move(settings), log());
    std::shared_ptr<Child> child = Child::start(launch);
    Json manifest = child->manifest();
    return {std::move(manifest),
            std::make_unique<ProcessHandle>(std::move(launch), std::move(child))};
  }

 private:
  Settings defaults_;
  std::string default_host_;
};

}  // namespace

PLUGBOARD_DEPLOYER(ProcessDeployer, R"({
  "name": "process", "version": "1.0.0", "deploys": ["native"], "priority": 50,
  "description": "Runs a plugin .so in a child process of its own (plugboard-host): a crash, hang or protocol error ends that child only, and the next call starts a new one",
  "config": {
    "host": {"type": "string", "description": "path to plugboard-host; default: the one next to this module as built or installed, else the first in PATH"},
    "memory": {"type": "size", "description": "address-space limit of the child, RLIMIT_AS, e.g. 512M"},
    "cpu_time": {"type": "duration", "description": "CPU time the child may use in its whole life, RLIMIT_CPU in seconds rounded up; past it the child is killed and the next call starts a new one"},
    "open_files": {"type": "integer", "description": "limit on the child's open file descriptors, RLIMIT_NOFILE"},
    "env": {"type": "string-map", "description": "environment variables for the child, added to the runtime's own"},
    "cwd": {"type": "string", "description": "working directory of the child; default: the runtime's"},
    "config": {"type": "object", "description": "configuration handed to the plugin's setUp"},
    "cancel_grace": {"type": "duration", "description": "how long a cancelled call may take to answer before the child is killed; default 1s"},
    "start_timeout": {"type": "duration", "description": "how long the child may take to load the plugin and answer hello; default 10s"}
  }
})")

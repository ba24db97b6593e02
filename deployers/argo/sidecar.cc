#include "deployers/argo/sidecar.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

#include "deployers/common/child_text.h"

namespace plugboard::argo_deployer {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

constexpr std::size_t kOutputKept = 4096;
constexpr uid_t kAgentUid = 8737;  // the user Argo's agent writes the token as

// As Argo's agent makes it: k8s.io/apimachinery's rand.String(32), from these letters.
std::string newToken() {
  static constexpr char kLetters[] = "bcdfghjklmnpqrstvwxz2456789";
  std::random_device random;
  std::string token;
  for (int i = 0; i < 32; ++i) token += kLetters[random() % (sizeof kLetters - 1)];
  return token;
}

std::string pullOf(const SidecarSpec& spec, const SidecarOptions& options) {
  if (!options.pull.empty()) return options.pull;
  if (spec.pull_policy == "Always") return "always";
  if (spec.pull_policy == "Never") return "never";
  return "missing";
}

// A free port of 127.0.0.1 on this machine, for reach "publish".
unsigned short freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  unsigned short port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

bool connects(int fd, unsigned short port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// Whether the server at 127.0.0.1:`port` answers an HTTP request within half a second:
// podman holds a published port before the container's network is set up (with a user
// namespace of its own, after the container's process starts), and a connection made then
// is accepted and never served.
bool answers(int fd, unsigned short port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (ok) {
    const timeval wait{0, 500000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    static constexpr char kProbe[] = "GET / HTTP/1.0\r\n\r\n";
    char byte = 0;
    ok = ::send(fd, kProbe, sizeof kProbe - 1, MSG_NOSIGNAL) == sizeof kProbe - 1 &&
         ::recv(fd, &byte, 1, 0) == 1;
  }
  ::close(fd);
  return ok;
}

std::string jsonList(const std::vector<std::string>& items) { return Json(items).dump(); }

}  // namespace

Sidecar::Sidecar(const SidecarSpec& spec, const SidecarOptions& options, std::string container,
                 plugboard::Logger log, const plugboard::Cancellation& cancel)
    : spec_(spec),
      options_(options),
      container_(std::move(container)),
      log_(log),
      token_root_("plugboard-argo-") {
  const std::string who = "plugin '" + spec_.name + "' (image " + spec_.image + ")";
  for (const auto& name : spec_.env_from) {
    if (!options_.env.count(name)) {
      throw std::runtime_error(who + ": env '" + name +
                               "' comes from valueFrom (a Secret or a field in Kubernetes): give "
                               "its value with option env = { " +
                               name + " = \"...\" }");
    }
  }
  auto security = host::readSecurityContext(
      &spec_.security_context, nullptr, options_.containment.pod_security, "spec.sidecar.container",
      "the configuration's [containment] executor_plugins allows more");
  if (!security) throw std::runtime_error(who + ": " + security.error().message());
  // The token, as Argo's agent writes it; the directory is what /var/run/argo shows.
  const auto& map = deployer_common::userNamespaceMap();
  const bool mapped = options_.containment.user_namespace && map.has_value();
  const std::string& root = token_root_.path();
  const std::string dir = root + "/" + spec_.container_name;
  const std::string file = dir + "/token";
  token_ = newToken();
  pidfile_ = root + "/pid";
  ::chmod(root.c_str(), 0711);
  if (::mkdir(dir.c_str(), 0770) != 0)
    throw std::runtime_error(who + ": cannot make " + dir + ": " + std::strerror(errno));
  {
    std::ofstream out(file, std::ios::binary);
    out << token_;
  }
  const bool root_user = ::geteuid() == 0;
  // Owned by the agent's user and group 0, as in the pod (in the container's user
  // namespace: the host ids those map to); without root (rootless podman, where this user
  // is the container's root) readable by all instead.
  ::chmod(file.c_str(), root_user ? 0440 : 0444);
  ::chmod(dir.c_str(), root_user ? 0770 : 0755);
  const uid_t owner = mapped ? static_cast<uid_t>(map->uid + kAgentUid) : kAgentUid;
  const gid_t group = mapped ? static_cast<gid_t>(map->gid) : 0;
  if (root_user &&
      (::chown(file.c_str(), owner, group) != 0 || ::chown(dir.c_str(), owner, group) != 0)) {
    throw std::runtime_error(who + ": cannot give its token to user 8737: " + std::strerror(errno));
  }

  deployer_common::PodmanRun run(options_.podman);
  run.flag("--rm")
      .option("--name", container_)
      .option("--pidfile", pidfile_)
      .option("--pull", pullOf(spec_, options_))
      .option("--log-driver", "none");
  if (options_.reach == "publish") {
    host_port_ = freeLoopbackPort();
    run.option("--publish",
               "127.0.0.1:" + std::to_string(host_port_) + ":" + std::to_string(spec_.port));
  } else {
    run.option("--network", "none");
  }
  for (const auto& u : options_.ulimits) run.option("--ulimit", u);
  if (!spec_.memory.empty()) run.option("--memory", spec_.memory);
  if (!spec_.cpus.empty()) run.option("--cpus", spec_.cpus);
  if (!spec_.working_dir.empty()) run.option("--workdir", spec_.working_dir);
  std::map<std::string, std::string> env(spec_.env.begin(), spec_.env.end());
  for (const auto& [k, v] : options_.env) env[k] = v;
  for (const auto& [k, v] : env) run.env(k, v);
  run.option("--volume", dir + ":/var/run/argo:ro");
  // Kubernetes: command replaces the image's entrypoint and then its CMD is not used.
  if (!spec_.command.empty()) run.option("--entrypoint", jsonList(spec_.command));
  run.contain(*security, options_.containment).operatorArgs(options_.args);
  auto made = run.command(spec_.image, spec_.args);
  if (!made) throw std::runtime_error(who + ": " + made.error().message());
  const std::vector<std::string>& argv = *made;

  if (cancel.cancelled()) throw std::runtime_error(who + ": the start was cancelled");
  host::SpawnOptions so;
  so.program = argv.front();
  so.argv = argv;
  so.env = host::environmentWith({});
  // Known before podman runs: should the runtime exit now, abandon() removes it.
  live_.add(container_, options_.podman, root);
  auto child = host::spawn(so);
  if (!child) {
    throw std::runtime_error(who + ": podman did not start: " + child.error().message());
  }
  podman_pid_ = child->pid;
  deployer_common::LiveContainers::instance().setClient(container_, podman_pid_);
  child->in.reset();
  monitor_ = std::thread([this, c = std::move(*child)]() mutable { monitor(std::move(c)); });
  log_.debug("sidecar " + container_ + " of plugin '" + spec_.name +
             "' is starting: waiting for port " + std::to_string(spec_.port));
  try {
    waitForPort(who, cancel);
  } catch (...) {
    stop();
    throw;
  }
  log_.debug("sidecar " + container_ + " of plugin '" + spec_.name + "' listens on port " +
             std::to_string(spec_.port));
}

void Sidecar::waitForPort(const std::string& who, const plugboard::Cancellation& cancel) {
  bool cancelled = false;  // guarded by mu_
  const auto watch = cancel.watch([&] {
    std::lock_guard lock(mu_);
    cancelled = true;
    cv_.notify_all();
  });
  // As the agent's first call would (bounded).
  const auto deadline = Clock::now() + options_.start_timeout;
  long pid = 0;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (cancelled) throw std::runtime_error(who + ": the start was cancelled");
    }
    if (auto end = ended()) {
      throw std::runtime_error(who + ": the sidecar ended before it opened port " +
                               std::to_string(spec_.port) + ": " + *end);
    }
    bool open = false;
    // The container's process, once podman has started it (its network is set up by then).
    if (pid <= 0) {
      std::ifstream in(pidfile_);
      if (in >> pid && pid > 0)
        log_.debug("sidecar " + container_ + " runs (pid " + std::to_string(pid) +
                   "): waiting for port " + std::to_string(spec_.port));
    }
    if (options_.reach == "publish") {
      // Podman holds the published port from the start: the server must answer (answers()).
      if (pid > 0) {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        open = fd >= 0 && answers(fd, host_port_);
      }
    } else {
      if (netns_ < 0 && pid > 0) {
        netns_ = ::open(("/proc/" + std::to_string(pid) + "/ns/net").c_str(), O_RDONLY | O_CLOEXEC);
      }
      if (netns_ >= 0) {
        auto fd = socketInside();
        if (!fd) throw std::runtime_error(who + ": " + fd.error().message());
        open = connects(*fd, spec_.port);
      }
    }
    if (open) return;
    if (Clock::now() >= deadline) {
      const std::string output = lastOutput();
      throw std::runtime_error(
          who + ": the sidecar did not open port " + std::to_string(spec_.port) + " within " +
          std::to_string(options_.start_timeout.count()) + "ms (option 'start_timeout'); " +
          (output.empty() ? "it wrote nothing" : "its last output: " + output));
    }
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, Millis(20), [&] { return ended_.has_value() || cancelled; });
  }
}

Sidecar::~Sidecar() { stop(); }

void Sidecar::stop() {
  if (podman_pid_ > 0) {
    // `podman run` first: one that has not made the container yet would make it after its
    // removal.
    deployer_common::LiveContainers::instance().setClient(container_, -1);
    {
      std::lock_guard lock(mu_);
      if (!exited_) ::kill(-podman_pid_, SIGKILL);
    }
    deployer_common::removeContainer(options_.podman, container_, log_);
    if (monitor_.joinable()) monitor_.join();
    podman_pid_ = -1;
  }
  if (netns_ >= 0) ::close(netns_);
  netns_ = -1;
}

void Sidecar::monitor(host::Spawned child) {
  pollfd fds[2] = {{child.out.get(), POLLIN, 0}, {child.err.get(), POLLIN, 0}};
  int open = 2;
  char buffer[4096];
  while (open > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (auto& p : fds) {
      if (p.fd < 0 || p.revents == 0) continue;
      const ssize_t n = ::read(p.fd, buffer, sizeof buffer);
      if (n > 0) {
        std::lock_guard lock(mu_);
        output_.append(buffer, static_cast<std::size_t>(n));
        if (output_.size() > 2 * kOutputKept) output_.erase(0, output_.size() - kOutputKept);
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        p.fd = -1;
        --open;
      }
    }
  }
  // Exited, not yet reaped: stop() signals its group only while `exited_` is false.
  siginfo_t info{};
  while (::waitid(P_PID, child.pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  int status = 0;
  {
    std::lock_guard lock(mu_);
    exited_ = true;
    while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  std::string how = WIFEXITED(status) ? "exited with code " + std::to_string(WEXITSTATUS(status))
                                      : "podman was killed by signal " +
                                            deployer_common::signalName(WTERMSIG(status));
  if (WIFEXITED(status) && WEXITSTATUS(status) > 128)
    how = "killed by signal " + deployer_common::signalName(WEXITSTATUS(status) - 128);
  const std::string output = lastOutput();
  std::lock_guard lock(mu_);
  ended_ = how + (output.empty() ? "" : "; its last output: " + output);
  cv_.notify_all();
}

std::string Sidecar::lastOutput() {
  std::lock_guard lock(mu_);
  const bool cut = output_.size() > kOutputKept;
  return deployer_common::stderrTail(
      cut ? std::string_view(output_).substr(output_.size() - kOutputKept) : output_, cut);
}

std::optional<std::string> Sidecar::ended() {
  std::lock_guard lock(mu_);
  return ended_;
}

host::Expected<int> Sidecar::socketInside() const {
  int fd = -1;
  int error = 0;
  // setns() moves only the calling thread: a thread of its own, which ends there.
  std::thread([&] {
    if (::setns(netns_, CLONE_NEWNET) != 0) {
      error = errno;
      return;
    }
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) error = errno;
  }).join();
  if (fd < 0) {
    return host::Error(
        std::string("cannot make a socket in the sidecar's network namespace: ") +
        std::strerror(error) +
        (error == EPERM
             ? " (this needs root with rootful podman; else use option reach = \"publish\")"
             : ""));
  }
  return fd;
}

HttpTarget Sidecar::target() const {
  HttpTarget t;
  t.address = "127.0.0.1";
  t.host_header = "localhost:" + std::to_string(spec_.port);
  if (options_.reach == "publish") {
    t.port = host_port_;
  } else {
    t.port = static_cast<unsigned short>(spec_.port);
    t.make_socket = [this] { return socketInside(); };
  }
  return t;
}

}  // namespace plugboard::argo_deployer

#include "deployers/common/podman.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>

#include <plugboard/host/owner.h>
#include <plugboard/host/spawn.h>

#include <sstream>

#include "deployers/common/image_store.h"
#include "deployers/common/launch.h"

namespace plugboard::deployer_common {

std::vector<std::string> Podman::global() const {
  return {binary, "--runtime", runtime, "--cgroup-manager", cgroup_manager};
}

std::string findPodman(const std::string& option) {
  auto found = host::findExecutable(option);
  if (!found && option == "podman") found = host::findExecutable("/usr/bin/podman");
  if (found) return *found;
  throw std::runtime_error(
      option == "podman"
          ? "podman is not installed (no 'podman' in PATH): install the Debian package podman, "
            "or set option 'podman'"
          : "podman '" + option + "' (option 'podman') is not an executable file");
}

bool applyPodmanOption(Podman& p, const std::string& key, const Json& value) {
  std::string* target = key == "podman"           ? &p.binary
                        : key == "runtime"        ? &p.runtime
                        : key == "cgroup_manager" ? &p.cgroup_manager
                                                  : nullptr;
  if (target == nullptr) return false;
  if (!value.is_string() || value.get_ref<const std::string&>().empty()) {
    throw std::invalid_argument("option '" + key + "' must be a non-empty string, got " +
                                value.dump());
  }
  *target = value.get<std::string>();
  return true;
}

std::string podmanPull(const std::string& key, const Json& value) {
  const std::string pull = value.is_string() ? value.get<std::string>() : "";
  if (pull != "never" && pull != "if-not-present" && pull != "always") {
    throw std::invalid_argument(
        "option '" + key + "' must be 'never', 'if-not-present' or 'always', got " + value.dump());
  }
  return pull == "if-not-present" ? "missing" : pull;
}

std::string imageNamePart(const std::string& image) {
  const auto slash = image.rfind('/');
  std::string name = image.substr(slash == std::string::npos ? 0 : slash + 1);
  name = name.substr(0, name.find_first_of(":@"));
  std::string out;
  for (char c : name) {
    out +=
        std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '-';
  }
  return out.empty() ? "plugin" : out;
}

std::string randomRunId() {
  std::random_device random;
  const char* digits = "0123456789abcdef";
  std::string id = host::ownerTag() + ".";
  for (int i = 0; i < 4; ++i) id += digits[random() % 16];
  return id;
}

std::optional<std::string> commandOutput(const std::vector<std::string>& argv) {
  host::SpawnOptions o;
  o.program = argv.front();
  o.argv = argv;
  o.env = host::environmentWith({});
  auto spawned = host::spawn(o);
  if (!spawned) return std::nullopt;
  spawned->in.reset();
  spawned->err.reset();
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(spawned->out.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  int status = 0;
  while (::waitpid(spawned->pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

namespace {

// The run id in a container's name (randomRunId()): the '-'-separated part of the form
// digits.digits.hex4; "" when the name has none.
std::string_view runIdIn(std::string_view name) {
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('-', start);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view part = name.substr(start, end - start);
    const auto first = part.find('.'), last = part.rfind('.');
    if (first != std::string_view::npos && last != first && part.size() - last == 5 &&
        std::all_of(part.begin(), part.begin() + last,
                    [](char c) { return (c >= '0' && c <= '9') || c == '.'; }))
      return part.substr(0, last);  // <pid>.<start>
    start = end + 1;
  }
  return {};
}

// Names of plugboard's containers in the store whose run is gone, read from the store's
// list (<graphroot>/<driver>-containers/containers.json beside the image list).
bool anyOrphanNamed() {
  const StoredContainers stored = storedContainerNames();
  if (!stored.known) return true;  // the files cannot tell: ask podman
  for (const auto& name : stored.names) {
    if (!name.starts_with("plugboard-")) continue;
    const std::string_view tag = runIdIn(name);
    if (!tag.empty() && !host::ownerTagAlive(tag)) return true;
  }
  return false;
}

}  // namespace

void removeLeftoversOf(Podman podman, const plugboard::Logger& log) {
  try {
    podman.binary = findPodman(podman.binary);
  } catch (const std::runtime_error&) {
    return;  // no podman: no container of ours either
  }
  removeLeftovers(podman, log);
}

void removeLeftovers(const Podman& podman, const plugboard::Logger& log) {
  std::error_code ec;
  std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  std::size_t dirs = 0;
  for (const char* prefix : {"plugboard-step-", "plugboard-argo-"})
    dirs += host::removeDeadDirectories(tmp, prefix).size();
  std::size_t containers = 0;
  if (anyOrphanNamed()) {
    std::vector<std::string> ps = podman.global();
    ps.insert(ps.end(), {"ps", "--all", "--filter=label=io.plugboard.owner",
                         "--format={{.Names}}\t{{index .Labels \"io.plugboard.owner\"}}"});
    std::istringstream lines(commandOutput(ps).value_or(""));
    std::string line;
    while (std::getline(lines, line)) {
      const auto tab = line.find('\t');
      if (tab == std::string::npos) continue;
      if (host::ownerLiveness(line.substr(tab + 1)) != host::Liveness::kGone) continue;
      removeContainer(podman, line.substr(0, tab), log);
      ++containers;
    }
  }
  if (containers + dirs > 0) {
    log.warn("removed what runs that were killed left behind: " + std::to_string(containers) +
             " container(s) and " + std::to_string(dirs) + " directory(ies)");
  }
}

void removeContainer(const Podman& podman, const std::string& name, const plugboard::Logger& log) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::string> rm = podman.global();
  rm.insert(rm.end(), {"rm", "--force", "--time", "0", "--ignore", name});
  std::vector<std::string> exists = podman.global();
  exists.insert(exists.end(), {"container", "exists", name});
  // `podman rm` can fail for a moment, e.g. while the cleanup process of a container whose
  // `podman run` was just killed holds it; the container then runs on. Only "it no longer
  // exists" (exit code 1 of `podman container exists`) ends the attempts.
  const auto deadline = Clock::now() + kRemoveTimeout;
  std::chrono::milliseconds pause{100};
  for (int attempt = 1;; ++attempt) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    const int removed = host::runToEnd(rm, std::max(left, std::chrono::milliseconds(1)));
    if (host::runToEnd(exists, kRemoveTimeout) == 1) {
      if (attempt > 1)
        log.info("removed container " + name + " at attempt " + std::to_string(attempt));
      return;
    }
    if (Clock::now() + pause >= deadline) {
      log.warn("could not remove container " + name + " (podman rm " +
               (removed == 0 ? "succeeded but the container remains" : "failed") + ", " +
               std::to_string(attempt) + " attempts)");
      return;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(1000));
  }
}

LiveContainers& LiveContainers::instance() {
  static LiveContainers live;
  return live;
}

void LiveContainers::add(const std::string& name, const Podman& podman, std::string dir) {
  std::lock_guard lock(mu_);
  live_[name] = Entry{podman, -1, std::move(dir)};
}

void LiveContainers::setClient(const std::string& name, pid_t client) {
  std::lock_guard lock(mu_);
  if (auto it = live_.find(name); it != live_.end()) it->second.client = client;
}

void LiveContainers::remove(const std::string& name) {
  std::lock_guard lock(mu_);
  live_.erase(name);
}

void LiveContainers::removeAll() {
  std::map<std::string, Entry> live;
  {
    std::lock_guard lock(mu_);
    live.swap(live_);
  }
  // A `podman run` that has not made its container yet would make it after the removal:
  // it goes first.
  for (const auto& [name, e] : live) {
    if (e.client > 0) ::kill(-e.client, SIGKILL);
  }
  std::vector<std::thread> removals;
  // Not a structured binding: clang before 16 does not let lambdas capture bindings.
  for (const auto& item : live) {
    removals.emplace_back([&item] {
      removeContainer(item.second.podman, item.first, plugboard::Logger());
      // The plugin's own teardown may be removing the directory at the same time, and
      // remove_all stops at the first entry the other removed first: go on until it is gone
      // (the process exits right after, with that teardown unfinished).
      std::error_code ec;
      for (int i = 0; i < 10 && !item.second.dir.empty() &&
                      std::filesystem::symlink_status(item.second.dir, ec).type() !=
                          std::filesystem::file_type::not_found;
           ++i) {
        std::filesystem::remove_all(item.second.dir, ec);
      }
    });
  }
  for (auto& t : removals) t.join();
}

LiveContainers::~LiveContainers() { removeAll(); }

void LiveContainer::add(const std::string& name, const Podman& podman, std::string dir) {
  LiveContainers::instance().add(name, podman, std::move(dir));
  name_ = name;
}

LiveContainer::~LiveContainer() {
  if (!name_.empty()) LiveContainers::instance().remove(name_);
}

TemporaryDirectory::TemporaryDirectory(const std::string& prefix) {
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) base = "/tmp";
  auto made = host::makeOwnedDirectory(base, prefix);
  if (!made) throw std::runtime_error(made.error().message());
  path_ = made->string();
}

TemporaryDirectory::~TemporaryDirectory() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void checkImageFiles(const std::string& image, const host::TrustRules& rules) {
  for (const std::string_view transport : {"oci-archive:", "docker-archive:", "oci:", "dir:"}) {
    if (!image.starts_with(transport)) continue;
    std::string path = image.substr(transport.size());
    std::error_code ec;
    // "path:reference": the path is what exists.
    if (const auto colon = path.rfind(':');
        colon != std::string::npos && !std::filesystem::exists(path, ec)) {
      path.resize(colon);
    }
    const bool tree = std::filesystem::is_directory(path, ec);
    requireTrusted(path, tree ? host::checkTree(path, rules, "image directory")
                              : host::checkFile(path, rules));
    return;
  }
}

}  // namespace plugboard::deployer_common

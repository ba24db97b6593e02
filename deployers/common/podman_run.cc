// deployers/common/podman_run.cc: see podman_run.h.
#include "deployers/common/podman_run.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <plugboard/host/owner.h>

namespace plugboard::deployer_common {
namespace {

constexpr unsigned long kMapSize = 65536;

// The first id of `user`'s range in `file` (/etc/subuid or /etc/subgid) when it holds at
// least kMapSize ids.
std::optional<unsigned long> subordinateStart(const char* file, std::string_view user) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with(user) || line.size() <= user.size() || line[user.size()] != ':') continue;
    unsigned long start = 0, count = 0;
    if (std::sscanf(line.c_str() + user.size() + 1, "%lu:%lu", &start, &count) == 2 &&
        start > 0 && count >= kMapSize)
      return start;
  }
  return std::nullopt;
}

}  // namespace

const std::optional<IdMap>& userNamespaceMap() {
  static const std::optional<IdMap> map = []() -> std::optional<IdMap> {
    if (::geteuid() != 0) return std::nullopt;
    const auto uid = subordinateStart("/etc/subuid", "containers");
    const auto gid = subordinateStart("/etc/subgid", "containers");
    if (!uid || !gid) return std::nullopt;
    return IdMap{*uid, *gid};
  }();
  return map;
}

PodmanRun::PodmanRun(const Podman& podman) : argv_(podman.global()) {
  argv_.emplace_back("run");
  // Who started it: removeLeftovers() removes it once that process is gone (a SIGKILL).
  option("--label", std::string(kOwnerLabel) + "=" + host::ownerRecord());
}

PodmanRun& PodmanRun::flag(std::string_view name) {
  argv_.emplace_back(name);
  return *this;
}

PodmanRun& PodmanRun::option(std::string_view name, std::string_view value) {
  argv_.push_back(std::string(name) + "=" + std::string(value));
  return *this;
}

PodmanRun& PodmanRun::env(std::string_view name, std::string_view value) {
  if (host::Status st = host::checkEnvName(name); !st && problem_.empty())
    problem_ = "env: " + st.error().message();
  return option("--env", std::string(name) + "=" + std::string(value));
}

PodmanRun& PodmanRun::contain(const host::ContainerSecurity& s, const host::Containment& c) {
  if (s.privileged && c.pod_security == host::PodSecurity::kPrivileged) {
    flag("--privileged");
  } else {
    option("--cap-drop", "all");
    for (const auto& cap : host::effectiveCapabilities(s, c.pod_security)) option("--cap-add", cap);
  }
  if (!s.allow_privilege_escalation) option("--security-opt", "no-new-privileges");
  if (s.run_as_user) {
    option("--user", std::to_string(*s.run_as_user) +
                         (s.run_as_group ? ":" + std::to_string(*s.run_as_group) : ""));
  }
  // Kubernetes gives a read-only root nothing writable: podman's --read-only alone would
  // add a tmpfs on /tmp and others.
  if (s.read_only_root) option("--read-only", "true").option("--read-only-tmpfs", "false");
  if (const auto& map = userNamespaceMap(); c.user_namespace && map) {
    option("--uidmap", "0:" + std::to_string(map->uid) + ":" + std::to_string(kMapSize));
    option("--gidmap", "0:" + std::to_string(map->gid) + ":" + std::to_string(kMapSize));
  }
  return *this;
}

PodmanRun& PodmanRun::operatorArgs(const std::vector<std::string>& args) {
  argv_.insert(argv_.end(), args.begin(), args.end());
  return *this;
}

host::Expected<std::vector<std::string>> PodmanRun::command(
    std::string_view image, const std::vector<std::string>& args) const {
  if (!problem_.empty()) return host::Error(problem_);
  if (host::Status st = host::checkImageReference(image); !st)
    return host::Error("image: " + st.error().message());
  std::vector<std::string> argv = argv_;
  argv.emplace_back("--");
  argv.emplace_back(image);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

host::Expected<std::vector<std::string>> podmanImageCommand(const Podman& podman,
                                                            const std::vector<std::string>& verb,
                                                            std::string_view image) {
  if (host::Status st = host::checkImageReference(image); !st)
    return host::Error("image: " + st.error().message());
  std::vector<std::string> argv = podman.global();
  argv.insert(argv.end(), verb.begin(), verb.end());
  argv.emplace_back("--");
  argv.emplace_back(image);
  return argv;
}

}  // namespace plugboard::deployer_common

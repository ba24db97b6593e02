// deployers/common/container_run.cc: see container_run.h.
#include "deployers/common/container_run.h"

#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <utility>

#include <plugboard/host/options.h>
#include <plugboard/host/protocol.h>

namespace plugboard::deployer_common {
namespace {

struct Names {
  std::mutex mu;
  std::map<unsigned, std::string> by_start;  // container names of starts not yet removed
};

}  // namespace

std::vector<std::string> stringList(const std::string& key, const Json& value) {
  const auto bad = [&] {
    return std::invalid_argument("option '" + key + "' must be a list of strings, got " +
                                 value.dump());
  };
  if (!value.is_array()) throw bad();
  std::vector<std::string> out;
  for (const auto& v : value) {
    if (!v.is_string()) throw bad();
    out.push_back(v.get<std::string>());
  }
  return out;
}

bool isContainerRunOption(const std::string& key) {
  static const std::set<std::string> kOptions = {
      "podman",  "runtime", "cgroup_manager", "pull", "network", "memory", "cpus",
      "ulimits", "env",     "mounts",         "user", "init",    "args",   "channel"};
  return kOptions.contains(key);
}

bool applyContainerRunOption(ContainerRunSettings& s, const std::string& key, const Json& value) {
  if (!isContainerRunOption(key)) return false;
  if (applyPodmanOption(s.podman, key, value)) return true;
  const auto must = [&](const std::string& what) {
    return std::invalid_argument("option '" + key + "' must be " + what + ", got " + value.dump());
  };
  const auto text = [&]() -> std::string {
    if (!value.is_string() || value.get_ref<const std::string&>().empty())
      throw must("a non-empty string");
    return value.get<std::string>();
  };
  if (key == "pull") {
    s.pull = podmanPull(key, value);
  } else if (key == "network") {
    s.network = text();
  } else if (key == "memory") {
    const auto bytes = host::parseSizeValue(value);
    if (!bytes || *bytes == 0) throw must("a size such as 256M or a number of bytes");
    s.memory = std::to_string(*bytes);
  } else if (key == "cpus") {
    const std::string cpus = value.is_number() ? value.dump() : text();
    char* end = nullptr;
    const double n = std::strtod(cpus.c_str(), &end);
    if (end == cpus.c_str() || *end != '\0' || !(n > 0)) throw must("a positive number");
    s.cpus = cpus;
  } else if (key == "ulimits") {
    s.ulimits = stringList(key, value);
  } else if (key == "env") {
    if (!value.is_object()) throw must("a table of strings");
    for (const auto& [name, v] : value.items()) {
      if (!v.is_string() || name.empty() || name.find('=') != std::string::npos)
        throw must("a table of strings");
      s.env[name] = v.get<std::string>();
    }
  } else if (key == "mounts") {
    s.mounts = stringList(key, value);
    for (const auto& m : s.mounts) {
      const auto colon = m.find(':');
      if (colon == std::string::npos || m.front() != '/' || colon + 1 >= m.size() ||
          m[colon + 1] != '/') {
        throw must("a list of \"/host/path:/container/path\"");
      }
    }
  } else if (key == "channel") {
    s.channel = text();
    if (s.channel != "fds" && s.channel != "stdio") throw must("'fds' or 'stdio'");
  } else if (key == "init") {
    if (!value.is_boolean()) throw must("true or false");
    s.init = value.get<bool>();
  } else if (key == "user") {
    s.user = text();
  } else if (key == "args") {
    s.args = stringList(key, value);
  }
  return true;
}

void addContainerLimits(PodmanRun& run, const ContainerRunSettings& s) {
  if (s.init) run.flag("--init");
  for (const auto& u : s.ulimits) run.option("--ulimit", u);
  if (!s.memory.empty()) run.option("--memory", s.memory);
  if (!s.cpus.empty()) run.option("--cpus", s.cpus);
  for (const auto& [k, v] : s.env) run.env(k, v);
  for (const auto& m : s.mounts) run.option("--volume", m + ":ro");
  if (!s.user.empty()) run.option("--user", s.user);
}

void configureContainerLaunch(Launch& launch, const ContainerRunSettings& s,
                              const std::string& image, const std::vector<std::string>& command,
                              const std::string& base_name,
                              std::shared_ptr<std::atomic<unsigned>> sequence) {
  if (host::Status st = host::checkImageReference(image); !st)
    throw std::runtime_error(st.error().message());
  // Each start runs a container of its own name, kept to remove it after an unclean end.
  auto names = std::make_shared<Names>();
  launch.argv_for_start = [base_name, sequence, names, s, image, command](unsigned start) {
    const std::string name = base_name + std::to_string(++*sequence);
    {
      std::lock_guard lock(names->mu);
      names->by_start[start] = name;
    }
    LiveContainers::instance().add(name, s.podman);
    PodmanRun run(s.podman);
    run.flag("--rm")
        .option("--name", name)
        .option("--network", s.network)
        .option("--pull", s.pull)
        .option("--log-driver", "none");
    if (s.channel == "fds") {  // descriptors 3 and 4 go straight to the plugin
      run.option("--preserve-fds", "2").env(host::kProtocolFdsVariable, "3,4");
    } else {  // stdin and stdout, relayed by podman
      run.flag("--interactive");
    }
    addContainerLimits(run, s);
    run.contain({}, s.containment).operatorArgs(s.args);
    auto argv = run.command(image, command);
    if (!argv) throw std::runtime_error(argv.error().message());
    return *std::move(argv);
  };
  const auto nameOf = [names](unsigned start, bool forget) {
    std::lock_guard lock(names->mu);
    auto it = names->by_start.find(start);
    if (it == names->by_start.end()) return std::string();
    std::string name = it->second;
    if (forget) names->by_start.erase(it);
    return name;
  };
  launch.after_spawn = [nameOf](unsigned start, pid_t pid) {
    LiveContainers::instance().setClient(nameOf(start, false), pid);
  };
  launch.after_end = [podman = s.podman, nameOf, log = launch.log](unsigned start, bool clean) {
    const std::string name = nameOf(start, true);
    if (name.empty()) return;
    // Its `podman run` has ended: its pid may be used again, never signal it.
    LiveContainers::instance().setClient(name, -1);
    if (!clean) removeContainer(podman, name, log);
    LiveContainers::instance().remove(name);
  };
  launch.exit_code_is_signal = true;
  launch.channel_on_fds_3_4 = s.channel == "fds";
}

std::string explainMissingImage(std::string why, const ContainerRunSettings& s) {
  if (why.find("image not known") != std::string::npos) {
    why += s.pull == "never" ? " (option 'pull' is 'never': make the image first, e.g. with "
                               "tools/plugin-image.sh, or load it with podman load)"
                             : " (no registry had it either)";
  }
  return why;
}

}  // namespace plugboard::deployer_common

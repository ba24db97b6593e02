// deployers/common/podman.cc: see podman.h.
#include "deployers/common/podman.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <utility>

#include <plugboard/host/options.h>
#include <plugboard/host/protocol.h>
#include <plugboard/host/spawn.h>

namespace plugboard::deployer_common {
namespace {

constexpr Millis kRemoveTimeout{30000};

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

bool isPodmanOption(const std::string& key) {
  static const std::set<std::string> kOptions = {
      "podman",  "runtime", "cgroup_manager", "pull", "network", "memory", "cpus",
      "ulimits", "env",     "mounts",         "init", "user",    "args"};
  return kOptions.contains(key);
}

bool applyPodmanOption(PodmanSettings& s, const std::string& key, const Json& value) {
  if (!isPodmanOption(key)) return false;
  const auto must = [&](const std::string& what) {
    return std::invalid_argument("option '" + key + "' must be " + what + ", got " + value.dump());
  };
  const auto text = [&]() -> std::string {
    if (!value.is_string() || value.get_ref<const std::string&>().empty())
      throw must("a non-empty string");
    return value.get<std::string>();
  };
  if (key == "podman") {
    s.podman = text();
  } else if (key == "runtime") {
    s.runtime = text();
  } else if (key == "cgroup_manager") {
    s.cgroup_manager = text();
  } else if (key == "pull") {
    s.pull = text();
    if (s.pull != "never" && s.pull != "if-not-present" && s.pull != "always")
      throw must("'never', 'if-not-present' or 'always'");
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
  } else if (key == "init") {
    if (!value.is_boolean()) throw must("true or false");
    s.init = value.get<bool>();
  } else if (key == "user") {
    s.user = text();
  } else if (key == "args") {
    s.args = stringList(key, value);
  } else {
    return false;
  }
  return true;
}

std::string podmanOf(const PodmanSettings& s) {
  auto found = host::findExecutable(s.podman);
  if (!found && s.podman == "podman") found = host::findExecutable("/usr/bin/podman");
  if (!found) {
    throw std::runtime_error(
        s.podman == "podman"
            ? "podman is not installed (no 'podman' in PATH): install the Debian package "
              "podman, or set option 'podman'"
            : "podman '" + s.podman + "' (option 'podman') is not an executable file");
  }
  return *found;
}

std::string pluginPart(const std::string& image) {
  std::string name = image.substr(image.rfind('/') == std::string::npos ? 0 : image.rfind('/') + 1);
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
  std::string id;
  for (int i = 0; i < 8; ++i) id += digits[random() % 16];
  return id;
}

// Images named in a container store or registry are podman's to verify.
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

void configurePodmanLaunch(Launch& launch, const PodmanSettings& s, const std::string& podman,
                           const std::string& image, const std::vector<std::string>& command,
                           const std::string& base_name,
                           std::shared_ptr<std::atomic<unsigned>> sequence) {
  const std::vector<std::string> global = {podman, "--runtime", s.runtime, "--cgroup-manager",
                                           s.cgroup_manager};
  // Each start runs a container of its own name, kept to remove it after an unclean end.
  auto names = std::make_shared<Names>();
  launch.argv_for_start = [global, base_name, sequence, names, s, image, command](unsigned start) {
    const std::string name = base_name + std::to_string(++*sequence);
    {
      std::lock_guard lock(names->mu);
      names->by_start[start] = name;
    }
    std::vector<std::string> argv = global;
    argv.insert(argv.end(),
                {"run", "--rm", "--name", name, "--network", s.network, "--pull",
                 s.pull == "if-not-present" ? "missing" : s.pull, "--log-driver", "none"});
    if (s.channel == "fds") {  // descriptors 3 and 4 go straight to the plugin
      argv.insert(argv.end(), {"--preserve-fds", "2", "--env",
                               std::string(host::kProtocolFdsVariable) + "=3,4"});
    } else {  // stdin and stdout, relayed by podman
      argv.push_back("--interactive");
    }
    if (s.init) argv.push_back("--init");
    for (const auto& u : s.ulimits) argv.insert(argv.end(), {"--ulimit", u});
    if (!s.memory.empty()) argv.insert(argv.end(), {"--memory", s.memory});
    if (!s.cpus.empty()) argv.insert(argv.end(), {"--cpus", s.cpus});
    for (const auto& [k, v] : s.env) argv.insert(argv.end(), {"--env", k + "=" + v});
    for (const auto& m : s.mounts) argv.insert(argv.end(), {"--volume", m + ":ro"});
    if (!s.user.empty()) argv.insert(argv.end(), {"--user", s.user});
    argv.insert(argv.end(), s.args.begin(), s.args.end());
    argv.push_back(image);
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
  };
  launch.after_unclean_end = [global, names, log = launch.log](unsigned start) {
    std::string name;
    {
      std::lock_guard lock(names->mu);
      auto it = names->by_start.find(start);
      if (it == names->by_start.end()) return;
      name = it->second;
      names->by_start.erase(it);
    }
    std::vector<std::string> rm = global;
    rm.insert(rm.end(), {"rm", "--force", "--time", "0", "--ignore", name});
    if (host::runToEnd(rm, kRemoveTimeout) != 0)
      log.warn("could not remove container " + name + " (podman rm failed)");
  };
  launch.exit_code_is_signal = true;
  launch.channel_on_fds_3_4 = s.channel == "fds";
}

std::string explainMissingImage(std::string why, const PodmanSettings& s) {
  if (why.find("image not known") != std::string::npos) {
    why += s.pull == "never" ? " (option 'pull' is 'never': make the image first, e.g. with "
                               "tools/plugin-image.sh, or load it with podman load)"
                             : " (no registry had it either)";
  }
  return why;
}

}  // namespace plugboard::deployer_common

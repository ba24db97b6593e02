// container: runs a plugin packed in a container image (tools/plugin-image.sh makes one
// from a plugin .so) with podman, one long-lived container per plugin, speaking protocol
// v1 with it over two pipes passed into the container.
//
// Artifact: {"image": "localhost/hello:1.2.0"} (optionally "command": [...], the program
// to run in it; default: the image's own, plugboard-host serving the plugin). The child is
//   podman --runtime R --cgroup-manager M run --rm --name plugboard-<run>-<plugin>-<n>
//          --network none --pull missing --log-driver none --preserve-fds 2
//          --env PLUGBOARD_PROTOCOL_FDS=3,4 --init --ulimit ... [options] IMAGE [command]
// with the protocol's pipes on descriptors 3 and 4, which podman hands to the plugin's
// process itself (option channel = "stdio": -i instead, podman relaying stdin/stdout).
// and the rest (the protocol, crash/hang/garbage handling, restart with backoff) is the
// process deployer's child code (library plugboard_child_process). A container whose
// podman ended any other way than exiting 0 after `shutdown` (a deadline's kill, a crash,
// a failed start) is removed with `podman rm -f` before the child is gone, so that no
// container outlives its plugin. Options are described in the manifest at the bottom and
// in docs/containers.md.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <plugboard/host/options.h>
#include <plugboard/host/protocol.h>
#include <plugboard/host/spawn.h>
#include <plugboard/host/trust.h>
#include <plugboard/deployer.hpp>

#include "deployers/common/handle.h"
#include "deployers/common/launch.h"
#include "deployers/common/podman.h"
#include "deployers/common/settings.h"

namespace plugboard::container_deployer {
namespace {

namespace fs = std::filesystem;
using deployer_common::Millis;

constexpr Millis kDefaultStartTimeout{30000};

struct ContainerSettings {
  deployer_common::Podman podman;
  std::string pull = "missing";  // as podman run --pull takes it
  std::string network = "none";
  std::string memory;  // bytes, as podman's --memory takes them; empty: no limit
  std::string cpus;
  std::vector<std::string> ulimits = {"nofile=1024:1024", "nproc=4096:4096"};
  std::map<std::string, std::string> env;
  std::vector<std::string> mounts;  // SRC:DST, mounted read-only
  std::string user;
  bool init = true;  // a minimal init (catatonit) as PID 1, so that the plugin's signals work
  std::string channel = "fds";    // the protocol on descriptors 3 and 4, or "stdio"
  std::vector<std::string> args;  // more `podman run` arguments, before the image
  deployer_common::Settings child;
};

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

// Reads `options` over `s`; throws std::invalid_argument naming the option.
void applyContainerOptions(ContainerSettings& s, const Json& options) {
  if (!options.is_object()) throw std::invalid_argument("the options must be a JSON object");
  Json child = Json::object();
  for (const auto& item : options.items()) {
    // Named references, not a structured binding: clang before 16 does not let lambdas
    // capture bindings.
    const std::string& key = item.key();
    const Json& value = item.value();
    const auto must = [&](const std::string& what) {
      return std::invalid_argument("option '" + key + "' must be " + what + ", got " +
                                   value.dump());
    };
    const auto text = [&]() -> std::string {
      if (!value.is_string() || value.get_ref<const std::string&>().empty())
        throw must("a non-empty string");
      return value.get<std::string>();
    };
    if (deployer_common::applyPodmanOption(s.podman, key, value)) {
      continue;
    } else if (key == "pull") {
      s.pull = deployer_common::podmanPull(key, value);
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
    } else if (key == "cancel_grace" || key == "start_timeout" || key == "frame_limit") {
      child[key] = value;
    } else {
      throw std::invalid_argument("unknown option '" + key + "'");
    }
  }
  deployer_common::applyOptions(s.child, child);
}

struct Names {
  std::mutex mu;
  std::map<unsigned, std::string> by_start;  // container names of starts not yet removed
};

class ContainerDeployer : public plugboard::Deployer {
 public:
  void setUp(const Json& config) override {
    host::ignoreSigpipe();
    defaults_.child.start_timeout = kDefaultStartTimeout;
    applyContainerOptions(defaults_, config);
    // Unavailable without podman: the runtime then says so for every step that needs it.
    podman_ = deployer_common::findPodman(defaults_.podman.binary);
  }

  plugboard::Deployed open(const Json& artifact, const Json& options) override {
    if (!artifact.is_object()) throw std::invalid_argument("the artifact must be a table");
    const auto image_it = artifact.find("image");
    if (image_it == artifact.end() || !image_it->is_string() ||
        image_it->get_ref<const std::string&>().empty()) {
      throw std::invalid_argument("the artifact has no 'image'");
    }
    const std::string image = image_it->get<std::string>();
    std::vector<std::string> command;
    if (auto c = artifact.find("command"); c != artifact.end()) {
      command = stringList("command", *c);
      if (command.empty()) throw std::invalid_argument("the artifact's 'command' is empty");
    }
    ContainerSettings s = defaults_;
    applyContainerOptions(s, options);
    const std::string podman = s.podman.binary == defaults_.podman.binary
                                   ? podman_
                                   : deployer_common::findPodman(s.podman.binary);
    const host::TrustRules rules = host::rulesOf(artifact);
    deployer_common::requireTrusted(podman, host::checkFile(podman, rules));
    deployer_common::checkImageFiles(image, rules);

    deployer_common::Podman resolved = s.podman;
    resolved.binary = podman;
    const std::vector<std::string> global = resolved.global();
    const std::string base =
        "plugboard-" + run_id_ + "-" + deployer_common::imageNamePart(image) + "-";
    auto launch =
        deployer_common::makeLaunch("image '" + image + "'", deployer_common::imageNamePart(image),
                                    "container", podman, {}, {}, s.child, log());
    // Each start runs a container of its own name, kept to remove it after an unclean end.
    auto names = std::make_shared<Names>();
    launch->argv_for_start = [global, base, sequence = sequence_, names, s, image,
                              command](unsigned start) {
      const std::string name = base + std::to_string(++*sequence);
      {
        std::lock_guard lock(names->mu);
        names->by_start[start] = name;
      }
      std::vector<std::string> argv = global;
      argv.insert(argv.end(), {"run", "--rm", "--name", name, "--network", s.network, "--pull",
                               s.pull, "--log-driver", "none"});
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
    launch->after_unclean_end = [resolved, names, log = log()](unsigned start) {
      std::string name;
      {
        std::lock_guard lock(names->mu);
        auto it = names->by_start.find(start);
        if (it == names->by_start.end()) return;
        name = it->second;
        names->by_start.erase(it);
      }
      deployer_common::removeContainer(resolved, name, log);
    };
    launch->exit_code_is_signal = true;
    launch->channel_on_fds_3_4 = s.channel == "fds";
    try {
      return deployer_common::startDeployed(std::move(launch));
    } catch (const std::runtime_error& e) {
      std::string why = e.what();
      if (why.find("image not known") != std::string::npos) {
        why += s.pull == "never" ? " (option 'pull' is 'never': make the image first, e.g. with "
                                   "tools/plugin-image.sh, or load it with podman load)"
                                 : " (no registry had it either)";
      }
      throw std::runtime_error(why);
    }
  }

 private:
  ContainerSettings defaults_;
  std::string podman_;
  const std::string run_id_ = deployer_common::randomRunId();
  std::shared_ptr<std::atomic<unsigned>> sequence_ = std::make_shared<std::atomic<unsigned>>(0);
};

}  // namespace
}  // namespace plugboard::container_deployer

PLUGBOARD_DEPLOYER(plugboard::container_deployer::ContainerDeployer, R"({
  "name": "container", "version": "1.0.0", "deploys": ["container"], "priority": 30,
  "description": "Runs a plugin from a container image with podman, one long-lived container per plugin, removed when the plugin ends however it ends",
  "config": {
    "podman": {"type": "string", "description": "the podman binary: a path, or a name looked up in PATH; default podman"},
    "runtime": {"type": "string", "description": "the OCI runtime, podman's --runtime; default runc"},
    "cgroup_manager": {"type": "string", "description": "podman's --cgroup-manager; default cgroupfs"},
    "pull": {"type": "string", "description": "when to pull the image: never, if-not-present (default) or always"},
    "network": {"type": "string", "description": "the container's network, podman's --network; default none"},
    "memory": {"type": "size", "description": "memory limit of the container, e.g. 256M"},
    "cpus": {"type": "string", "description": "CPUs the container may use, e.g. 1.5"},
    "ulimits": {"type": "string-list", "description": "podman --ulimit values; default nofile=1024:1024 and nproc=4096:4096"},
    "env": {"type": "string-map", "description": "environment variables set in the container"},
    "mounts": {"type": "string-list", "description": "host paths mounted read-only, each /host/path:/container/path"},
    "user": {"type": "string", "description": "the user the plugin runs as in the container, podman's --user"},
    "channel": {"type": "string", "description": "how the protocol reaches the plugin: 'fds' (default), descriptors 3 and 4 passed into the container and named by PLUGBOARD_PROTOCOL_FDS, which plugboard-host and the Python SDK honour; or 'stdio', the container's stdin and stdout relayed by podman"},
    "init": {"type": "boolean", "description": "run podman's init (catatonit) as PID 1 in the container, so that a plugin killed by a signal is reported as such; default true"},
    "args": {"type": "string-list", "description": "more podman run arguments, placed before the image"},
    "cancel_grace": {"type": "duration", "description": "how long a cancelled call may take to answer before its container is killed and removed; default 1s"},
    "start_timeout": {"type": "duration", "description": "how long the container may take to start and answer hello; default 30s"},
    "frame_limit": {"type": "size", "description": "the most bytes one protocol message may hold, in both directions; a larger result or request fails its call alone; default 16M"}
  }
})")

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
//
// Artifact kind "container-run" ({"mode": "run-to-end"}): no plugin, but the container and
// script templates of workflows, each call one container run to its end
// (template_run.h).
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <plugboard/host/options.h>
#include <plugboard/host/protocol.h>
#include <plugboard/host/spawn.h>
#include <plugboard/host/trust.h>
#include <plugboard/deployer.hpp>

#include "deployers/common/container_run.h"
#include "deployers/common/handle.h"
#include "deployers/common/launch.h"
#include "deployers/common/settings.h"
#include "deployers/container/template_run.h"

namespace plugboard::container_deployer {
namespace {

namespace fs = std::filesystem;
using deployer_common::Millis;

constexpr Millis kDefaultStartTimeout{30000};

// The wrapper that a template with output parameters runs in its container
// (step_wrapper.cc): <dir>/../container/plugboard-step-wrapper for this module in <dir>,
// checked as code with `rules`; else why it cannot be used.
host::Expected<std::string> findWrapper(const host::TrustRules& rules) {
  const fs::path dir = host::moduleDirectory();
  const std::string path =
      (dir.parent_path() / "container" / std::string(kWrapperName)).lexically_normal().string();
  if (dir.empty() || ::access(path.c_str(), X_OK) != 0) {
    return host::Error("its wrapper " + path +
                       " is missing (it is installed with the container deployer)");
  }
  if (host::Status st = host::refusal(path, host::checkFile(path, rules)); !st)
    return host::Error(st.error().message());
  return path;
}

struct ContainerSettings {
  deployer_common::ContainerRunSettings run;
  deployer_common::Settings child;
};

// Reads `options` over `s`; throws std::invalid_argument naming the option.
void applyContainerOptions(ContainerSettings& s, const Json& options) {
  if (!options.is_object()) throw std::invalid_argument("the options must be a JSON object");
  Json child = Json::object();
  for (const auto& [key, value] : options.items()) {
    if (deployer_common::applyContainerRunOption(s.run, key, value)) continue;
    if (key == "cancel_grace" || key == "start_timeout" || key == "frame_limit") {
      child[key] = value;
    } else {
      throw std::invalid_argument("unknown option '" + key + "'");
    }
  }
  deployer_common::applyOptions(s.child, child);
}

class ContainerDeployer : public plugboard::Deployer {
 public:
  void setUp(const Json& config) override {
    host::ignoreSigpipe();
    defaults_.child.start_timeout = kDefaultStartTimeout;
    applyContainerOptions(defaults_, config);
    // Unavailable without podman: the runtime then says so for every step that needs it.
    podman_ = deployer_common::findPodman(defaults_.run.podman.binary);
    deployer_common::removeLeftoversOf(defaults_.run.podman, log());
  }

  plugboard::Deployed start(const Json& artifact, const Json& options,
                            const plugboard::Cancellation& cancel) override {
    if (!artifact.is_object()) throw std::invalid_argument("the artifact must be a table");
    if (artifact.value("mode", std::string()) == kRunMode) return runToEnd(artifact, options);
    const auto image_it = artifact.find("image");
    if (image_it == artifact.end() || !image_it->is_string() ||
        image_it->get_ref<const std::string&>().empty()) {
      throw std::invalid_argument("the artifact has no 'image'");
    }
    const std::string image = image_it->get<std::string>();
    std::vector<std::string> command;
    if (auto c = artifact.find("command"); c != artifact.end()) {
      command = deployer_common::stringList("command", *c);
      if (command.empty()) throw std::invalid_argument("the artifact's 'command' is empty");
    }
    ContainerSettings s = settingsFor(artifact, options);
    s.run.containment = host::containmentOf(artifact, s.run.containment);
    deployer_common::checkImageFiles(image, host::rulesOf(artifact));
    const std::string& podman = s.run.podman.binary;
    const std::string base =
        "plugboard-" + run_id_ + "-" + deployer_common::imageNamePart(image) + "-";
    auto launch =
        deployer_common::makeLaunch("image '" + image + "'", deployer_common::imageNamePart(image),
                                    "container", podman, {}, {}, s.child, log());
    deployer_common::configureContainerLaunch(*launch, s.run, image, command, base, sequence_);
    try {
      return deployer_common::startDeployed(std::move(launch), &cancel);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(deployer_common::explainMissingImage(e.what(), s.run));
    }
  }

  // The deployer's settings with a step's `options` on top, and the podman binary they
  // name found and checked against the artifact's trust rules.
  ContainerSettings settingsFor(const Json& artifact, const Json& options) const {
    ContainerSettings s = defaults_;
    applyContainerOptions(s, options);
    const std::string podman = s.run.podman.binary == defaults_.run.podman.binary
                                   ? podman_
                                   : deployer_common::findPodman(s.run.podman.binary);
    deployer_common::requireTrusted(podman, host::checkFile(podman, host::rulesOf(artifact)));
    s.run.podman.binary = podman;
    return s;
  }

  // The "container-run" artifact: a handle that runs each template call's container to
  // its end (template_run.h).
  plugboard::Deployed runToEnd(const Json& artifact, const Json& options) {
    ContainerSettings s = settingsFor(artifact, options);
    // A workflow's own containers: Kubernetes' baseline unless the runtime says otherwise.
    s.run.containment = host::containmentOf(
        artifact, {host::PodSecurity::kBaseline, s.run.containment.user_namespace});
    const host::TrustRules rules = host::rulesOf(artifact);
    auto handle = std::make_unique<TemplateRunHandle>(
        s.run, "plugboard-step-" + run_id_ + "-", rules, log(), findWrapper(rules));
    return {TemplateRunHandle::manifest(), std::move(handle)};
  }

  void abandon() override { deployer_common::LiveContainers::instance().removeAll(); }

 private:
  ContainerSettings defaults_;
  std::string podman_;
  const std::string run_id_ = deployer_common::randomRunId();
  std::shared_ptr<std::atomic<unsigned>> sequence_ = std::make_shared<std::atomic<unsigned>>(0);
};

}  // namespace
}  // namespace plugboard::container_deployer

PLUGBOARD_DEPLOYER(plugboard::container_deployer::ContainerDeployer, R"({
  "name": "container", "version": "1.0.0", "deploys": ["container", "container-run"], "priority": 30,
  "description": "Runs a plugin from a container image with podman, one long-lived container per plugin, removed when the plugin ends however it ends; and runs the container and script templates of workflows to their end, as artifact kind container-run",
  "config": {
    )" PLUGBOARD_CONTAINER_RUN_OPTIONS R"(,
    "channel": {"type": "string", "step": true, "description": "how the protocol reaches the plugin: 'fds' (default), descriptors 3 and 4 passed into the container and named by PLUGBOARD_PROTOCOL_FDS, which plugboard-host and the Python SDK honour; or 'stdio', the container's stdin and stdout relayed by podman"},
    "cancel_grace": {"type": "duration", "step": true, "description": "how long a cancelled call may take to answer before its container is killed and removed; default 1s"},
    "start_timeout": {"type": "duration", "step": true, "description": "how long the container may take to start and answer hello; default 30s"},
    "frame_limit": {"type": "size", "step": true, "description": "the most bytes one protocol message may hold, in both directions; a larger result or request fails its call alone; default 16M"}
  }
})")

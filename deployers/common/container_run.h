// deployers/common/container_run.h: a plugin's child run in a container with podman, one
// container per child, removed after an unclean end (docs/containers.md): the `podman run`
// options the container and atp deployers take, and the Launch that runs
//   podman --runtime R --cgroup-manager M run --rm --name <base><n> --network N
//          --pull P --log-driver none (--preserve-fds 2 --env ...=3,4 | --interactive)
//          [--init] --ulimit ... [options] IMAGE [command]
// Part of library plugboard_deployer_common, on podman.h. Free functions; thread-safe.
#ifndef PLUGBOARD_DEPLOYERS_COMMON_CONTAINER_RUN_H_
#define PLUGBOARD_DEPLOYERS_COMMON_CONTAINER_RUN_H_

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <plugboard/sdk.hpp>

#include "deployers/common/launch.h"
#include "deployers/common/podman.h"
#include "deployers/common/podman_run.h"

// The manifest "config" entries of ContainerRunSettings except 'channel', for
// concatenation into a PLUGBOARD_DEPLOYER manifest.
#define PLUGBOARD_CONTAINER_RUN_OPTIONS                                                                                                                                              \
  PLUGBOARD_PODMAN_OPTIONS R"(,)"                    \
  R"("pull": {"type": "string", "step": true, "description": "when to pull the image: never, if-not-present (default) or always"},)"                                                               \
  R"("network": {"type": "string", "description": "the container's network, podman's --network; default none"},)"                                                                    \
  R"("memory": {"type": "size", "step": true, "description": "memory limit of the container, e.g. 256M"},)"                                                                                        \
  R"("cpus": {"type": "string", "step": true, "description": "CPUs the container may use, e.g. 1.5"},)"                                                                                            \
  R"("ulimits": {"type": "string-list", "description": "podman --ulimit values; default nofile=1024:1024 and nproc=4096:4096"},)"                                                    \
  R"("env": {"type": "string-map", "description": "environment variables set in the container"},)"                                                                                   \
  R"("mounts": {"type": "string-list", "description": "host paths mounted read-only, each /host/path:/container/path"},)"                                                            \
  R"("user": {"type": "string", "description": "the user the plugin runs as in the container, podman's --user"},)"                                                                   \
  R"("init": {"type": "boolean", "step": true, "description": "run podman's init (catatonit) as PID 1 in the container, so that a plugin killed by a signal is reported as such; default true"},)" \
  R"("args": {"type": "string-list", "description": "more podman run arguments, placed before the image"})"

namespace plugboard::deployer_common {

struct ContainerRunSettings {
  Podman podman;
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
  // The ceiling the runtime gave with the artifact (plugboard/host/containment.h): a
  // plugin's container runs under the restricted standard unless the operator widened it.
  host::Containment containment{host::PodSecurity::kRestricted, true};
};

// A list of strings, or std::invalid_argument naming option `key`.
std::vector<std::string> stringList(const std::string& key, const Json& value);

// Whether `key` is an option of ContainerRunSettings (PLUGBOARD_CONTAINER_RUN_OPTIONS, and
// 'channel').
bool isContainerRunOption(const std::string& key);

// Applies option `key` when isContainerRunOption(key); false if it is not one. Throws
// std::invalid_argument naming the option when its value is wrong.
bool applyContainerRunOption(ContainerRunSettings& s, const std::string& key, const Json& value);

// Adds what every container of these settings gets, after the caller's own flags: --init,
// --ulimit, --memory, --cpus, --env, --volume (read-only), --user; not option 'args' (the
// caller places them, last before the image) nor the containment (PodmanRun::contain()).
void addContainerLimits(PodmanRun& run, const ContainerRunSettings& s);

// Makes `launch` run `image` [`command`] as the top of this file shows, with `s.podman`
// (its binary absolute), each start in a container named `base_name` + a number from
// `sequence`, removed with `podman rm` after an unclean end, contained under
// `s.containment`. Throws std::runtime_error when `image` is not an image reference.
void configureContainerLaunch(Launch& launch, const ContainerRunSettings& s,
                              const std::string& image, const std::vector<std::string>& command,
                              const std::string& base_name,
                              std::shared_ptr<std::atomic<unsigned>> sequence);

// `why`, a start's failure, with a hint when podman did not know the image.
std::string explainMissingImage(std::string why, const ContainerRunSettings& s);

}  // namespace plugboard::deployer_common

#endif  // PLUGBOARD_DEPLOYERS_COMMON_CONTAINER_RUN_H_

// deployers/common/podman.h: running a plugin's child in a container with podman, one
// container per child, removed after an unclean end (docs/containers.md). Shared by the
// container deployer and the atp deployer (library plugboard_deployer_common).
//
// PodmanSettings are the container options both take (option names in the
// PLUGBOARD_PODMAN_OPTIONS manifest entries); configurePodmanLaunch() makes a Launch run
//   podman --runtime R --cgroup-manager M run --rm --name <base><n> --network N
//          --pull P --log-driver none (--preserve-fds 2 --env ...=3,4 | --interactive)
//          [--init] --ulimit ... [options] IMAGE [command]
// Free functions; thread-safe.
#ifndef PLUGBOARD_DEPLOYERS_COMMON_PODMAN_H_
#define PLUGBOARD_DEPLOYERS_COMMON_PODMAN_H_

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <plugboard/host/trust.h>
#include <plugboard/sdk.hpp>

#include "deployers/common/launch.h"
#include "deployers/common/settings.h"

// The manifest "config" entries of PodmanSettings, for concatenation into a
// PLUGBOARD_DEPLOYER manifest.
#define PLUGBOARD_PODMAN_OPTIONS                                                                                                                                                     \
  R"("podman": {"type": "string", "description": "the podman binary: a path, or a name looked up in PATH; default podman"},)"                                                        \
  R"("runtime": {"type": "string", "description": "the OCI runtime, podman's --runtime; default runc"},)"                                                                            \
  R"("cgroup_manager": {"type": "string", "description": "podman's --cgroup-manager; default cgroupfs"},)"                                                                           \
  R"("pull": {"type": "string", "description": "when to pull the image: never, if-not-present (default) or always"},)"                                                               \
  R"("network": {"type": "string", "description": "the container's network, podman's --network; default none"},)"                                                                    \
  R"("memory": {"type": "size", "description": "memory limit of the container, e.g. 256M"},)"                                                                                        \
  R"("cpus": {"type": "string", "description": "CPUs the container may use, e.g. 1.5"},)"                                                                                            \
  R"("ulimits": {"type": "string-list", "description": "podman --ulimit values; default nofile=1024:1024 and nproc=4096:4096"},)"                                                    \
  R"("env": {"type": "string-map", "description": "environment variables set in the container"},)"                                                                                   \
  R"("mounts": {"type": "string-list", "description": "host paths mounted read-only, each /host/path:/container/path"},)"                                                            \
  R"("user": {"type": "string", "description": "the user the plugin runs as in the container, podman's --user"},)"                                                                   \
  R"("init": {"type": "boolean", "description": "run podman's init (catatonit) as PID 1 in the container, so that a plugin killed by a signal is reported as such; default true"},)" \
  R"("args": {"type": "string-list", "description": "more podman run arguments, placed before the image"})"

namespace plugboard::deployer_common {

struct PodmanSettings {
  std::string podman = "podman";  // a path, or a name looked up in PATH
  std::string runtime = "runc";
  std::string cgroup_manager = "cgroupfs";
  std::string pull = "if-not-present";
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
};

// A list of strings, or std::invalid_argument naming option `key`.
std::vector<std::string> stringList(const std::string& key, const Json& value);

// Whether `key` is an option of PodmanSettings (PLUGBOARD_PODMAN_OPTIONS).
bool isPodmanOption(const std::string& key);

// Applies option `key` if it is one of PodmanSettings' (except "channel"); false if not.
// Throws std::invalid_argument naming the option when its value is wrong.
bool applyPodmanOption(PodmanSettings& s, const std::string& key, const Json& value);

// The podman program `s` names, absolute. Throws std::runtime_error saying how to get it.
std::string podmanOf(const PodmanSettings& s);

// "localhost/plugboard/hello:1.2.0" -> "hello": the part of a container name that names
// the plugin.
std::string pluginPart(const std::string& image);

// Eight random hex digits: names this runtime's containers apart from another's.
std::string randomRunId();

// An image podman reads from a file or directory of this machine (oci-archive:/p/x.tar
// ...) is checked with the trust rules like a plugin file; throws std::runtime_error.
void checkImageFiles(const std::string& image, const host::TrustRules& rules);

// Makes `launch` run `image` [`command`] with podman (absolute path `podman`) as the top of
// this file shows, each start in a container named `base_name` + a number from `sequence`,
// which is removed with podman rm after an unclean end.
void configurePodmanLaunch(Launch& launch, const PodmanSettings& s, const std::string& podman,
                           const std::string& image, const std::vector<std::string>& command,
                           const std::string& base_name,
                           std::shared_ptr<std::atomic<unsigned>> sequence);

// `why` (a start's failure) with a hint when podman did not know the image.
std::string explainMissingImage(std::string why, const PodmanSettings& s);

}  // namespace plugboard::deployer_common

#endif  // PLUGBOARD_DEPLOYERS_COMMON_PODMAN_H_

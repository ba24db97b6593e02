// deployers/common/podman_run.h: the one place where the deployers make the podman command
// lines that name an image (`podman run`, `podman image inspect`, `podman pull`), part of
// library plugboard_deployer_common.
//
// Whatever reaches these command lines from a workflow, a plugin's manifest, a registry, a
// ConfigMap or a parameter cannot be read as an option: every option is one argument
// (--name=value), an environment variable's name and the image are checked against their
// grammars (plugboard/host/containment.h), and `--` stands before the image. Every
// container is contained the same way (contain()): no new privileges, only the
// capabilities its ceiling allows, and a user namespace (userNamespaceMap()) where the host has
// subordinate ids for one, so that root in the container is an unprivileged user outside.
// Not thread-safe (one builder per command line).
#ifndef PLUGBOARD_DEPLOYERS_COMMON_PODMAN_RUN_H_
#define PLUGBOARD_DEPLOYERS_COMMON_PODMAN_RUN_H_

#include <string>
#include <optional>
#include <string_view>
#include <vector>

#include <plugboard/host/containment.h>
#include <plugboard/host/expected.h>

#include "deployers/common/podman.h"

namespace plugboard::deployer_common {

// The host ids that ids 0-65535 of a container map to, when containers get a user namespace
// here: podman runs as root (rootless podman maps the container's root to the calling user
// already) and /etc/subuid and /etc/subgid give user "containers" at least 65536
// subordinate ids (tools/setup.sh adds them). Every container of plugboard's gets the same
// map, the first 65536 of that range: root inside is an unprivileged uid outside, and
// podman makes the image's id-shifted copy once, not once per container (podman's
// --userns=auto picks a new range per container, and its copies raced when several
// started at once). Read once; nullopt when containers get none.
struct IdMap {
  unsigned long uid = 0, gid = 0;  // host ids of the container's 0
};
const std::optional<IdMap>& userNamespaceMap();

class PodmanRun {
 public:
  explicit PodmanRun(const Podman& podman);

  // A fixed flag of the deployer's own, e.g. "--rm".
  PodmanRun& flag(std::string_view name);
  // --name=value, as one argument.
  PodmanRun& option(std::string_view name, std::string_view value);
  // --env=NAME=value; a name that is not one (checkEnvName) is the command's error.
  PodmanRun& env(std::string_view name, std::string_view value);
  // no-new-privileges, the capabilities, the user, a read-only root and the user namespace
  // of a container under `containment` (see the top of this file).
  PodmanRun& contain(const host::ContainerSecurity& security, const host::Containment& containment);
  // The operator's own `podman run` arguments (a deployer's option 'args', from the
  // configuration only), placed as given before the image.
  PodmanRun& operatorArgs(const std::vector<std::string>& args);

  // {podman, global flags, run, options..., --, image, command...}, or the first problem:
  // an image that is not a reference, a bad environment variable's name.
  host::Expected<std::vector<std::string>> command(std::string_view image,
                                                   const std::vector<std::string>& args) const;

 private:
  std::vector<std::string> argv_;
  std::string problem_;
};

// {podman, global flags, `verb`..., --, image}: `podman image inspect --format=...`,
// `podman pull`; or why `image` is not an image reference.
host::Expected<std::vector<std::string>> podmanImageCommand(const Podman& podman,
                                                            const std::vector<std::string>& verb,
                                                            std::string_view image);

}  // namespace plugboard::deployer_common

#endif  // PLUGBOARD_DEPLOYERS_COMMON_PODMAN_RUN_H_

// core/launch/placement.h: a choice of deployer for a plugin, as the configuration's [deploy]
// section or a workflow step's `deploy =` states it, and the ceiling of what a container the
// runtime starts may get, as the configuration's [containment] states it. Value types.
#ifndef PLUGBOARD_CORE_LAUNCH_PLACEMENT_H_
#define PLUGBOARD_CORE_LAUNCH_PLACEMENT_H_

#include <string>

#include <plugboard/host/containment.h>
#include <nlohmann/json.hpp>

namespace plugboard::core {

struct Placement {
  std::string deployer;                               // by name
  nlohmann::json options = nlohmann::json::object();  // checked against its manifest
};

// The artifact kind of a workflow's own container and script templates, run to their end.
inline constexpr char kContainerRunKind[] = "container-run";

// [containment] (docs/security.md): Kubernetes' Pod Security Standard that caps what a
// securityContext may ask for, by what starts the container, and whether containers get a
// user namespace of their own. Only the configuration file sets it, never a workflow. Each
// start's artifact carries its part (host::kContainmentMember).
struct ContainmentPolicy {
  host::PodSecurity templates = host::PodSecurity::kBaseline;  // container-run artifacts
  host::PodSecurity plugins = host::PodSecurity::kRestricted;  // every other artifact
  bool user_namespaces = true;
  host::Containment forKind(const std::string& kind) const {
    return {kind == kContainerRunKind ? templates : plugins, user_namespaces};
  }
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_LAUNCH_PLACEMENT_H_

// plugboard/host/containment.h: what a container that a workflow or a plugin's manifest
// asks for may get, shared by the runtime (which refuses a workflow in `validate`) and the
// deployers that run containers (which refuse it again when it runs, after substitution).
//
// * The grammars of the values that reach a container runtime's command line: an image
//   reference (Docker's reference grammar, or a transport naming a file of this machine)
//   and an environment variable's name (Kubernetes' rule).
// * Kubernetes' Pod Security Standards as a ceiling on a securityContext: "restricted"
//   (an executor plugin's sidecar by default), "baseline" (a container or script template
//   by default) or "privileged" (what an operator may allow in the configuration, never a
//   workflow). What is allowed is read into ContainerSecurity, which a deployer turns into
//   its runtime's options.
//
// Errors name the field at fault and the rule. Free functions; thread-safe.
#ifndef PLUGBOARD_HOST_CONTAINMENT_H_
#define PLUGBOARD_HOST_CONTAINMENT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugboard/host/expected.h"

namespace plugboard::host {

// The artifact member in which the runtime tells a deployer the ceiling of what it starts:
// {"pod_security": "restricted" | "baseline" | "privileged", "user_namespace": bool}.
inline constexpr const char* kContainmentMember = "containment";

// An image reference as a container runtime reads it, never as an option: Docker's
// reference grammar (name[:tag][@digest], lower-case path components, an optional domain
// with a port), optionally after "docker://" or "containers-storage:", or a transport that
// reads a file of this machine (oci-archive:, docker-archive:, oci:, dir:) with an absolute
// path. The error says what is wrong: "'--privileged' is not an image reference (...)".
Status checkImageReference(std::string_view image);

// An environment variable's name as Kubernetes takes it: [-._a-zA-Z][-._a-zA-Z0-9]*.
Status checkEnvName(std::string_view name);

enum class PodSecurity { kRestricted, kBaseline, kPrivileged };

// "restricted", "baseline", "privileged" -> the level; nullopt for anything else.
std::optional<PodSecurity> parsePodSecurity(std::string_view name);
const char* podSecurityName(PodSecurity level);

// The containment of a start as the runtime gives it (kContainmentMember of an artifact);
// `fallback` when the artifact has none (a runtime older than this header).
struct Containment {
  PodSecurity pod_security = PodSecurity::kBaseline;
  bool user_namespace = true;  // where the host has subordinate ids for it
};
Containment containmentOf(const nlohmann::json& artifact, Containment fallback);
nlohmann::json toJson(const Containment& c);

// What a container gets, read from its securityContext and its pod's.
struct ContainerSecurity {
  std::optional<long long> run_as_user, run_as_group;
  bool run_as_non_root = false;
  bool read_only_root = false;
  bool privileged = false;                  // only under kPrivileged
  bool allow_privilege_escalation = false;  // only under kPrivileged, when asked
  // Capability names in upper case without "CAP_"; "ALL" in drop drops every one.
  std::vector<std::string> cap_add, cap_drop;
};

// Reads a container's securityContext (`container`, may be null) over its pod's (`pod`,
// may be null: runAsUser, runAsGroup, runAsNonRoot, seccompProfile, seLinuxOptions,
// sysctls) and checks it against `ceiling`. `where` prefixes the field in errors, e.g.
// "spec.templates[2].container" gives "spec.templates[2].container.securityContext.
// privileged: refused by the baseline Pod Security Standard (...)". `widen` names what an
// operator sets to allow more, and is said in the error.
Expected<ContainerSecurity> readSecurityContext(const nlohmann::json* container,
                                                const nlohmann::json* pod, PodSecurity ceiling,
                                                std::string_view where, std::string_view widen);

// The capabilities a container runs with: the default set of `ceiling` (none under
// restricted; Kubernetes' baseline set, as container runtimes give by default, otherwise),
// less what `s` drops, with what it adds. Upper case, without "CAP_", sorted.
std::vector<std::string> effectiveCapabilities(const ContainerSecurity& s, PodSecurity ceiling);

}  // namespace plugboard::host

#endif  // PLUGBOARD_HOST_CONTAINMENT_H_

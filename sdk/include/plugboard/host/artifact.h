// plugboard/host/artifact.h: members the runtime adds to every artifact it hands a deployer
// (besides plugboard/host/trust.h's kTrustMember). Constants only; thread-safe.
#ifndef PLUGBOARD_HOST_ARTIFACT_H_
#define PLUGBOARD_HOST_ARTIFACT_H_

namespace plugboard::host {

// The plugin the artifact belongs to, "name@version" as the registry resolved it, for
// deployers whose plugins do not say who they are.
inline constexpr const char* kPluginMember = "plugin";

}  // namespace plugboard::host

#endif  // PLUGBOARD_HOST_ARTIFACT_H_

// deployers/argo/plugin_spec.h: an Argo executor plugin's manifest, as `plugin.yaml`
// (apiVersion argoproj.io/v1alpha1, kind ExecutorPlugin) or as the ConfigMap that `argo
// executor-plugin build` writes from it (label workflows.argoproj.io/configmap-type:
// ExecutorPlugin, data sidecar.container holding the container as YAML), read into what
// `podman run` needs to start its sidecar as Argo's controller starts it in an agent pod.
// Free functions; thread-safe.
#ifndef PLUGBOARD_DEPLOYERS_ARGO_PLUGIN_SPEC_H_
#define PLUGBOARD_DEPLOYERS_ARGO_PLUGIN_SPEC_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <plugboard/host/expected.h>
#include <plugboard/sdk.hpp>

namespace plugboard::argo_deployer {

struct SidecarSpec {
  std::string name;            // metadata.name: the plugin's name, its key in templates
  std::string container_name;  // spec.sidecar.container.name
  std::string image;
  std::string pull_policy;                 // imagePullPolicy; empty when not given
  std::vector<std::string> command, args;  // Kubernetes' command (entrypoint) and args
  std::vector<std::pair<std::string, std::string>> env;  // env with a value
  std::vector<std::string> env_from;                     // env given by valueFrom (secrets, fields)
  std::string working_dir;
  int port = 0;        // the first containerPort
  std::string memory;  // resources.limits.memory, in bytes
  std::string cpus;    // resources.limits.cpu, in CPUs ("0.5")
  Json security_context;    // spec.sidecar.container.securityContext, as written
  std::string version;      // annotation plugboard/version, else ""
  std::string description;  // annotation workflows.argoproj.io/description
  bool from_config_map = false;  // read from the ConfigMap `argo executor-plugin build` wrote
};

// YAML text (one document) as JSON: mappings, sequences and scalars; plain scalars that
// are integers, true/false or null become those, every other scalar a string. Anchors and
// aliases are refused. Errors name the line and column.
host::Expected<Json> yamlToJson(std::string_view text);

// The sidecar an ExecutorPlugin manifest or its ConfigMap describes, checked as Argo's
// controller checks it (at least one port, resources requests and limits, a
// securityContext; pkg/plugins/spec/plugin_types.go) and for what podman needs (an image).
// Errors name the member: "spec.sidecar.container.ports: at least one port is mandatory".
host::Expected<SidecarSpec> readExecutorPlugin(std::string_view yaml_text);

// A Kubernetes quantity as bytes ("128Mi" -> "134217728", "1G" -> "1000000000") or CPUs
// ("500m" -> "0.5", "2" -> "2"). Errors say what is accepted.
host::Expected<std::string> memoryBytes(const Json& quantity);
host::Expected<std::string> cpuCount(const Json& quantity);

}  // namespace plugboard::argo_deployer

#endif  // PLUGBOARD_DEPLOYERS_ARGO_PLUGIN_SPEC_H_

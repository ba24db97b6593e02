// deployers/argo/sidecar.h: one Argo executor-plugin sidecar run with podman, as Argo's
// controller runs it in an agent pod (workflow/controller/agent.go): the container of its
// manifest (image, command, args, env, working directory, resource limits, securityContext
// user, capabilities, read-only root), with a fresh token written as Argo's agent writes
// it (cmd/argoexec/commands/agent.go: 32 characters, no newline, mode 0440, in a
// directory of mode 0770, both owned by 8737:0) mounted read-only at /var/run/argo.
//
// Reach: the sidecar has no network (--network none) and is reached on its own loopback,
// as the agent reaches it in the pod: sockets are made inside the container's network
// namespace (setns(2) on a short-lived thread; needs CAP_SYS_ADMIN, i.e. rootful podman
// as root). Reach "publish" instead gives the container podman's default network and
// publishes the port on 127.0.0.1 of this machine (for rootless podman).
//
// The constructor returns once the port accepts connections, or throws naming the plugin,
// the image and the container's last output; a cancel (the step's deadline, Ctrl-C) stops
// it at once. The container has the name given, so that it is removed whatever podman did
// so far: the destructor, a failed or cancelled start and the deployer's abandon() (through
// deployer_common::LiveContainers) kill `podman run`, remove the container and then the
// token's directory (in $TMPDIR, else /tmp). Thread-safe.
#ifndef PLUGBOARD_DEPLOYERS_ARGO_SIDECAR_H_
#define PLUGBOARD_DEPLOYERS_ARGO_SIDECAR_H_

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <plugboard/deployer.hpp>
#include <plugboard/host/spawn.h>
#include <plugboard/sdk.hpp>

#include "deployers/argo/http_client.h"
#include "deployers/argo/plugin_spec.h"
#include "deployers/common/podman.h"
#include "deployers/common/podman_run.h"

namespace plugboard::argo_deployer {

struct SidecarOptions {
  deployer_common::Podman podman;  // binary resolved
  std::string pull;                // podman's --pull; empty: from imagePullPolicy
  std::string reach = "netns";     // or "publish"
  std::vector<std::string> ulimits = {"nofile=1024:1024", "nproc=4096:4096"};
  std::map<std::string, std::string> env;  // added to (or replacing) the manifest's
  std::vector<std::string> args;           // more `podman run` arguments
  std::chrono::milliseconds start_timeout{30000};
  // What the runtime allows its securityContext (the artifact's containment): Kubernetes'
  // restricted standard unless the operator widened it.
  host::Containment containment{host::PodSecurity::kRestricted, true};
};

using deployer_common::TemporaryDirectory;

class Sidecar {
 public:
  // Throws std::runtime_error: the container could not start, did not open its port
  // within start_timeout, or `cancel` stopped the start; the message names the plugin,
  // the image and its last output.
  Sidecar(const SidecarSpec& spec, const SidecarOptions& options, std::string container,
          plugboard::Logger log, const plugboard::Cancellation& cancel);
  ~Sidecar();
  Sidecar(const Sidecar&) = delete;
  Sidecar& operator=(const Sidecar&) = delete;

  const std::string& token() const { return token_; }
  const std::string& name() const { return container_; }
  // Where its port is reached.
  HttpTarget target() const;
  // Empty while podman runs it; else how it ended and its last output.
  std::optional<std::string> ended();

 private:
  // Waits until the port accepts connections; throws as the constructor says.
  void waitForPort(const std::string& who, const plugboard::Cancellation& cancel);
  void monitor(host::Spawned child);
  std::string lastOutput();
  // Kills `podman run`, removes the container and waits for the monitor. Idempotent.
  void stop();
  // A TCP socket in the container's network namespace.
  host::Expected<int> socketInside() const;

  const SidecarSpec spec_;
  const SidecarOptions options_;
  const std::string container_;
  const plugboard::Logger log_;
  std::string token_;
  // Its entry in deployer_common::LiveContainers, left only after the directory is gone.
  deployer_common::LiveContainer live_;
  TemporaryDirectory token_root_;  // holds the token's directory; removed last
  std::string pidfile_;
  int netns_ = -1;
  unsigned short host_port_ = 0;  // reach "publish"
  pid_t podman_pid_ = -1;
  std::thread monitor_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool exited_ = false;  // podman has exited: its pid may be reaped, never signal it
  std::string output_;   // the end of its stdout and stderr
  std::optional<std::string> ended_;
};

}  // namespace plugboard::argo_deployer

#endif  // PLUGBOARD_DEPLOYERS_ARGO_SIDECAR_H_

// deployers/container/template_run.h: the container deployer's run-to-end mode, for the
// container and script templates of a workflow (docs/containers.md, "Container and script
// templates").
//
// The deployer declares the artifact kind "container-run"; the runtime opens the artifact
// {"mode": "run-to-end"} once and gets a handle whose every call runs one container to its
// end, as Argo runs a template's pod. A call's request is the one every plugin gets, its
// "template" Argo's template with every tag filled:
//   {"name": ..., "container" | "script": {"image", "command", "args",
//    "env": [{"name", "value"}], "workingDir", "source" (script)},
//    "outputs": {"parameters": [{"name", "valueFrom": {"path", "default"}}]}}
// The call runs
//   podman --runtime R --cgroup-manager M run [--rm] --name plugboard-step-<run>-<n>
//          --network N --pull P --log-driver none [--init] --ulimit ... [options]
//          [--workdir W] [--env ...] [--volume <dir>:/argo/staging:ro]
//          [--entrypoint COMMAND] IMAGE ARGS... [/argo/staging/script]
// a script's source written to /argo/staging/script and run as `command + args + [file]`,
// as Argo's controller does (workflow/controller/operator.go, executeScript). It answers
// Succeeded for exit code 0, else Failed with Argo's message "main: Error (exit code N)";
// outputs {"parameters": {name: value}, "result": stdout, "exitCode": "N"}: each
// parameter read from the stopped container's file system (`podman mount`, the path
// resolved inside that root; `podman cp` where podman cannot mount), one trailing newline
// trimmed, valueFrom.default when the file is missing; stdout with one trailing newline
// trimmed and only its last 256 KiB kept, as Argo's executor does
// (workflow/executor/executor.go: SaveParameters, CaptureScriptResult). Podman failing to
// run the container at all (exit code 125 with podman's "Error:") is an Error naming why.
// The container is removed however the call ends; cancel() kills its `podman run` and
// removes it.
//
// Thread-safety: execute() may run on several threads at once; cancel() from any thread.
#ifndef PLUGBOARD_DEPLOYERS_CONTAINER_TEMPLATE_RUN_H_
#define PLUGBOARD_DEPLOYERS_CONTAINER_TEMPLATE_RUN_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <plugboard/host/trust.h>
#include <plugboard/deployer.hpp>

#include "deployers/common/container_run.h"

namespace plugboard::container_deployer {

// The artifact kind the container deployer runs templates for, and the member of such an
// artifact that selects the mode.
inline constexpr std::string_view kRunKind = "container-run";
inline constexpr std::string_view kRunMode = "run-to-end";

// Where a script's source is, in the container (Argo's common.ExecutorScriptSourcePath).
inline constexpr std::string_view kScriptPath = "/argo/staging/script";
// The most of stdout kept as `result` (Argo's executor: 256 kB, the last of it).
inline constexpr std::size_t kResultLimit = 256 * 1024;
// The largest output parameter file read.
inline constexpr std::size_t kParameterLimit = 1024 * 1024;

class TemplateRunHandle final : public plugboard::Handle {
 public:
  // `s.podman.binary` absolute. Containers are named `name_prefix` + a number.
  TemplateRunHandle(deployer_common::ContainerRunSettings s, std::string name_prefix,
                    host::TrustRules rules, plugboard::Logger log);
  ~TemplateRunHandle() override;

  // The handle's manifest: "container-run", providing template.execute, parallel.
  static Json manifest();

  std::string execute(std::uint64_t call_id, std::string_view request) override;
  void cancel(std::uint64_t call_id) override;

 private:
  struct Call;  // one container under way
  std::shared_ptr<Call> begin(std::uint64_t call_id);
  void end(std::uint64_t call_id);

  const deployer_common::ContainerRunSettings settings_;
  const std::string name_prefix_;
  const host::TrustRules rules_;
  const plugboard::Logger log_;
  std::atomic<unsigned> sequence_{0};
  std::mutex mu_;  // guards calls_
  std::map<std::uint64_t, std::shared_ptr<Call>> calls_;
};

}  // namespace plugboard::container_deployer

#endif  // PLUGBOARD_DEPLOYERS_CONTAINER_TEMPLATE_RUN_H_

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
//   podman --runtime R --cgroup-manager M run --rm --name plugboard-step-<run>-<n>
//          --network N --pull P --log-driver none [--init] --ulimit ... [options]
//          [--workdir W] [--env ...] [--volume <dir>:/argo/staging:ro]
//          [--entrypoint COMMAND] IMAGE ARGS... [/argo/staging/script]
// a script's source written to /argo/staging/script and run as `command + args + [file]`,
// as Argo's controller does (workflow/controller/operator.go, executeScript). It answers
// Succeeded for exit code 0, else Failed with Argo's message "main: Error (exit code N)";
// outputs {"parameters": {name: value}, "result": stdout, "exitCode": "N"}, stdout with
// one trailing newline trimmed and only its last 256 KiB kept, as Argo's executor does
// (workflow/executor/executor.go: CaptureScriptResult).
//
// A template with output parameters from a path runs under the wrapper
// (step_wrapper.cc), as Argo's emissary runs the main container's command
// (cmd/argoexec/commands/emissary.go): the wrapper, mounted read-only at kWrapperPath, is
// the entrypoint, given the limit, the paths and the whole command (the template's, else
// the image's entrypoint and CMD, read once per image with `podman image inspect`):
//   ... --preserve-fds 1 --volume <wrapper>:/.plugboard/step-wrapper:ro
//       --entrypoint '["/.plugboard/step-wrapper"]' IMAGE LIMIT PATH... -- COMMAND ARGS...
// After the command has ended, the wrapper opens each path in the container (links
// resolved in its root) and sends it through a pipe on the container's descriptor 3; each
// record is checked here: a regular file of at most kParameterLimit bytes, one trailing
// newline trimmed, valueFrom.default when it cannot be read (workflow/executor/
// executor.go: SaveParameters), else an Error naming the parameter, its path and why.
// Podman failing to run the container at all (exit code 125 with podman's "Error:") is an
// Error naming why. The container is removed however the call ends (by `podman run --rm`,
// else here); cancel() kills its `podman run` and removes it.
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
#include <utility>
#include <vector>

#include <plugboard/host/expected.h>
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

// Where the wrapper is mounted in a container, and its file's name, installed beside the
// deployer in <lib>/plugboard/container/ (<build>/container/).
inline constexpr std::string_view kWrapperPath = "/.plugboard/step-wrapper";
inline constexpr std::string_view kWrapperName = "plugboard-step-wrapper";

// An image's entrypoint and command (its CMD).
using ImageCommand = std::pair<std::vector<std::string>, std::vector<std::string>>;

class TemplateRunHandle final : public plugboard::Handle {
 public:
  // `s.podman.binary` absolute. Containers are named `name_prefix` + a number. `wrapper`:
  // the wrapper's file, absolute and trusted, or why there is none (then a template with
  // output parameters is an Error saying so).
  TemplateRunHandle(deployer_common::ContainerRunSettings s, std::string name_prefix,
                    host::TrustRules rules, plugboard::Logger log,
                    host::Expected<std::string> wrapper);
  ~TemplateRunHandle() override;

  // The handle's manifest: "container-run", providing template.execute, parallel.
  static Json manifest();

  std::string execute(std::uint64_t call_id, std::string_view request) override;
  void cancel(std::uint64_t call_id) override;

 private:
  struct Call;  // one container under way
  std::shared_ptr<Call> begin(std::uint64_t call_id);
  void end(std::uint64_t call_id);
  // `image`'s entrypoint and CMD, read once per image and handle (pulled first when it is
  // not here and `pull` allows).
  host::Expected<ImageCommand> imageCommand(const std::string& image, const std::string& pull);

  const deployer_common::ContainerRunSettings settings_;
  const std::string name_prefix_;
  const host::TrustRules rules_;
  const plugboard::Logger log_;
  const std::string wrapper_, wrapper_problem_;
  std::atomic<unsigned> sequence_{0};
  std::mutex mu_;  // guards calls_ and images_
  std::map<std::uint64_t, std::shared_ptr<Call>> calls_;
  std::map<std::string, ImageCommand> images_;
};

}  // namespace plugboard::container_deployer

#endif  // PLUGBOARD_DEPLOYERS_CONTAINER_TEMPLATE_RUN_H_

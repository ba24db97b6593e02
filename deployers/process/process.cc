// process: runs each plugin .so in a child process of its own, so that a plugin that
// crashes, hangs or breaks the protocol takes only its child down, never the runtime.
//
// Artifact: {"path": "/abs/plugin.so"}. The child is plugboard-host (tools/plugboard-host),
// which serves the plugin over protocol v1 (docs/protocol.md) on its stdin and stdout.
// Options (the deployer's config gives defaults, a step's options override them) are
// described in the manifest at the bottom and in docs/deployers.md.
//
// One long-lived child per handle, with several calls in flight. Per child, a reader
// thread matches results to the waiting calls and forwards log lines, and a second thread
// keeps the tail of the child's stderr for error messages. When the child dies or breaks
// the protocol, every call in flight ends with an Error that names the plugin, the cause
// and that tail; the next call starts a new child, with backoff after repeated failures.
//
// SIGPIPE: a write to a child that has died raises SIGPIPE, whose default action would
// end the runtime. setUp() sets it to SIG_IGN if it is still SIG_DFL (a runtime that
// installed a handler of its own keeps it); writes then fail with EPIPE and the reader
// thread reports the death. Children start with SIGPIPE at SIG_DFL and no signal blocked.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <plugboard/deployer.hpp>

#include <plugboard/host/spawn.h>
#include <plugboard/host/trust.h>

#include "deployers/common/handle.h"
#include "deployers/common/launch.h"
#include "deployers/common/settings.h"

namespace plugboard::process_deployer {
namespace {

namespace fs = std::filesystem;
using deployer_common::applyOptions;
using deployer_common::defaultHost;
using deployer_common::makeHostLaunch;
using deployer_common::resolveHost;
using deployer_common::Settings;
using deployer_common::startDeployed;

// ---------------------------------------------------------------------------------------
// The deployer

class ProcessDeployer : public plugboard::Deployer {
 public:
  void setUp(const Json& config) override {
    host::ignoreSigpipe();
    applyOptions(defaults_, config);
    default_host_ = defaultHost();
  }

  // A child that hangs before its hello is killed when the start is cancelled.
  plugboard::Deployed start(const Json& artifact, const Json& options,
                            const plugboard::Cancellation& cancel) override {
    const auto path = artifact.find("path");
    if (path == artifact.end() || !path->is_string() ||
        path->get_ref<const std::string&>().empty()) {
      throw std::invalid_argument("the artifact has no 'path' to a plugin .so");
    }
    Settings settings = defaults_;
    applyOptions(settings, options);
    std::string host = resolveHost(settings.host, default_host_);
    // The plugin .so was checked by the runtime; the program that loads it is checked here.
    deployer_common::requireTrusted(host, host::checkFile(host, host::rulesOf(artifact)));
    auto launch = makeHostLaunch(fs::absolute(path->get<std::string>()).string(), std::move(host),
                             std::move(settings), log());
    return startDeployed(std::move(launch), &cancel);
  }

 private:
  Settings defaults_;
  std::string default_host_;
};

}  // namespace
}  // namespace plugboard::process_deployer

PLUGBOARD_DEPLOYER(plugboard::process_deployer::ProcessDeployer, R"({
  "name": "process", "version": "1.0.0", "deploys": ["native"], "priority": 50,
  "description": "Runs a plugin .so in a child process of its own (plugboard-host): a crash, hang or protocol error ends that child only, and the next call starts a new one",
  "config": {
    )" PLUGBOARD_CHILD_PROCESS_OPTIONS R"(,
    "host": {"type": "string", "description": "path to plugboard-host; default: the one next to this module as built or installed, else the first in PATH"},
    "env": {"type": "string-map", "description": "environment variables for the child, added to the runtime's own"},
    "config": {"type": "object", "step": true, "description": "configuration handed to the plugin's setUp"},
    "start_timeout": {"type": "duration", "step": true, "description": "how long the child may take to load the plugin and answer hello; default 10s"}
  }
})")

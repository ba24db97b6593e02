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

#include "core/duration.h"
#include "deployers/process/child.h"
#include "deployers/process/settings.h"
#include "deployers/process/spawn.h"

namespace plugboard::process_deployer {
namespace {

namespace fs = std::filesystem;

constexpr Millis kFirstBackoff{100};
constexpr Millis kMaxBackoff{5000};

// Sets SIGPIPE to SIG_IGN unless the runtime chose its own disposition. See the top.
void ignoreSigpipe() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) return;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, nullptr);
}

// ---------------------------------------------------------------------------------------
// The handle: one plugin, restarted after its child dies

class ProcessHandle : public plugboard::Handle {
 public:
  ProcessHandle(std::shared_ptr<const Launch> launch, std::shared_ptr<Child> child)
      : launch_(std::move(launch)),
        who_("plugin '" + child->name() + "' (process)"),
        child_(std::move(child)) {}

  std::string execute(std::uint64_t call_id, std::string_view request) override {
    if (request.find('{') != request.find_first_not_of(" \t\r\n") || !Json::accept(request)) {
      return Result::Error(who_ + ": the request is not a JSON object").toText();
    }
    {
      std::lock_guard lock(mu_);
      if (!calls_.emplace(call_id, false).second) {
        return Result::Error(who_ + ": call " + std::to_string(call_id) + " is already in flight")
            .toText();
      }
    }
    std::string result = run(call_id, request);
    std::lock_guard lock(mu_);
    calls_.erase(call_id);
    return result;
  }

  void cancel(std::uint64_t call_id) override {
    std::shared_ptr<Child> child;
    {
      std::lock_guard lock(mu_);
      auto it = calls_.find(call_id);
      if (it == calls_.end()) return;
      it->second = true;
      cv_.notify_all();
      child = child_;
    }
    if (child) child->cancel(call_id);
  }

 private:
  std::string run(std::uint64_t id, std::string_view request) {
    std::string error;
    std::shared_ptr<Child> child = running(id, error);
    if (!child || !child->begin(id, error)) return Result::Error(error).toText();
    child->sendExecute(id, request);
    // A cancel that came before begin() found no call in the child: repeat it.
    if (cancelAsked(id)) child->cancel(id);
    Child::Answer answer = child->wait(id);
    if (answer.answered) {
      std::lock_guard lock(mu_);
      failures_ = 0;
    }
    return std::move(answer.result);
  }

  bool cancelAsked(std::uint64_t id) {
    std::lock_guard lock(mu_);
    return calls_.at(id);
  }

  // 0 for the first restart after an answered call, then 100 ms, 200 ms, 400 ms ... 5 s.
  static Millis backoff(int failures) {
    if (failures == 0) return Millis(0);
    if (failures > 7) return kMaxBackoff;
    return std::min(kFirstBackoff * (1 << (failures - 1)), kMaxBackoff);
  }

  // The child to run call `id` in, started again if it died; null with `error` set when
  // it cannot be started or the call was cancelled while waiting for it.
  std::shared_ptr<Child> running(std::uint64_t id, std::string& error) {
    std::unique_lock lock(mu_);
    const std::uint64_t attempts_seen = attempts_;
    // A call cancelled before it was sent still goes out (run() repeats the cancel),
    // unless it would have to wait for a restart.
    cv_.wait(lock, [&] { return !restarting_ || calls_.at(id); });
    if (restarting_) {
      error = who_ + ": the call was cancelled while the plugin was being started again";
      return nullptr;
    }
    if (child_ && child_->alive()) return child_;
    if (attempts_ != attempts_seen && !last_failure_.empty()) {  // the restart it waited for failed
      error = last_failure_;
      return nullptr;
    }
    restarting_ = true;
    const Millis delay = backoff(failures_++);
    if (cv_.wait_for(lock, delay, [&] { return calls_.at(id); })) {
      restarting_ = false;
      cv_.notify_all();
      error = who_ + ": the call was cancelled while the plugin was being started again";
      return nullptr;
    }
    std::shared_ptr<Child> dead = std::move(child_);
    lock.unlock();
    dead.reset();
    std::shared_ptr<Child> fresh;
    std::string why;
    try {
      fresh = Child::start(launch_);
    } catch (const std::exception& e) {
      why = e.what();
    }
    lock.lock();
    restarting_ = false;
    ++attempts_;
    cv_.notify_all();
    if (!fresh) {
      last_failure_ = who_ + " could not be started again: " + why;
      error = last_failure_;
      launch_->log.warn(last_failure_);
      return nullptr;
    }
    last_failure_.clear();
    launch_->log.info(
        who_ + " started again" +
        (delay.count() > 0 ? " after " + plugboard::core::formatGoDuration(delay) : ""));
    child_ = fresh;
    return fresh;
  }

  const std::shared_ptr<const Launch> launch_;
  const std::string who_;  // "plugin 'name' (process)"
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<Child> child_;
  std::map<std::uint64_t, bool> calls_;  // calls in execute(): id -> cancel asked
  bool restarting_ = false;
  int failures_ = 0;            // restarts since the last answered call
  std::uint64_t attempts_ = 0;  // restarts tried
  std::string last_failure_;    // of the last restart; empty if it worked
};

// ---------------------------------------------------------------------------------------
// The deployer

class ProcessDeployer : public plugboard::Deployer {
 public:
  void setUp(const Json& config) override {
    ignoreSigpipe();
    applyOptions(defaults_, config);
    default_host_ = defaultHost();
  }

  plugboard::Deployed open(const Json& artifact, const Json& options) override {
    const auto path = artifact.find("path");
    if (path == artifact.end() || !path->is_string() ||
        path->get_ref<const std::string&>().empty()) {
      throw std::invalid_argument("the artifact has no 'path' to a plugin .so");
    }
    Settings settings = defaults_;
    applyOptions(settings, options);
    std::string host = resolveHost(settings.host, default_host_);
    auto launch = makeLaunch(fs::absolute(path->get<std::string>()).string(), std::move(host),
                             std::move(settings), log());
    std::shared_ptr<Child> child = Child::start(launch);
    Json manifest = child->manifest();
    return {std::move(manifest),
            std::make_unique<ProcessHandle>(std::move(launch), std::move(child))};
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
    "host": {"type": "string", "description": "path to plugboard-host; default: the one next to this module as built or installed, else the first in PATH"},
    "memory": {"type": "size", "description": "address-space limit of the child, RLIMIT_AS, e.g. 512M"},
    "cpu_time": {"type": "duration", "description": "CPU time the child may use in its whole life, RLIMIT_CPU in seconds rounded up; past it the child is killed and the next call starts a new one"},
    "open_files": {"type": "integer", "description": "limit on the child's open file descriptors, RLIMIT_NOFILE"},
    "env": {"type": "string-map", "description": "environment variables for the child, added to the runtime's own"},
    "cwd": {"type": "string", "description": "working directory of the child; default: the runtime's"},
    "config": {"type": "object", "description": "configuration handed to the plugin's setUp"},
    "cancel_grace": {"type": "duration", "description": "how long a cancelled call may take to answer before the child is killed; default 1s"},
    "start_timeout": {"type": "duration", "description": "how long the child may take to load the plugin and answer hello; default 10s"}
  }
})")

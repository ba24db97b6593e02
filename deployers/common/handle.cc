// deployers/common/handle.cc: see handle.h.
#include "deployers/common/handle.h"

#include <algorithm>
#include <exception>

#include <plugboard/host/json_text.h>
#include <plugboard/host/options.h>

namespace plugboard::deployer_common {

plugboard::Deployed startDeployed(std::shared_ptr<const Launch> launch,
                                  const plugboard::Cancellation* cancel) {
  std::shared_ptr<Child> child = Child::start(launch, cancel);
  Json manifest = child->manifest();
  return {std::move(manifest),
          std::make_unique<RestartingHandle>(std::move(launch), std::move(child))};
}

plugboard::Deployed deferredDeployed(std::shared_ptr<const Launch> launch, Json manifest) {
  const std::string name = manifest.value("name", std::string());
  return {std::move(manifest),
          std::make_unique<RestartingHandle>(std::move(launch), nullptr, name)};
}

RestartingHandle::RestartingHandle(std::shared_ptr<const Launch> launch,
                                   std::shared_ptr<Child> child, const std::string& name)
    : launch_(std::move(launch)),
      who_("plugin '" + (child ? child->name() : name) + "' (" + launch_->deployer + ")"),
      child_(std::move(child)) {}

std::string RestartingHandle::execute(std::uint64_t call_id, std::string_view request) {
  if (request.find('{') != request.find_first_not_of(" \t\r\n") || host::holdsNul(request) ||
      !Json::accept(request)) {
    return Result::Error(who_ + ": the request is not a JSON object").toText();
  }
  // Its frame nests it one level deeper, and the child refuses a frame beyond the limit.
  if (host::jsonDeeperThan(request, host::kMaxJsonDepth - 1)) {
    return Result::Error(who_ + ": the request is " + host::tooDeepText(host::kMaxJsonDepth - 1))
        .toText();
  }
  {
    std::lock_guard lock(mu_);
    if (!calls_.try_emplace(call_id).second) {
      return Result::Error(who_ + ": call " + std::to_string(call_id) + " is already in flight")
          .toText();
    }
  }
  std::string result = run(call_id, request);
  std::shared_ptr<Child> last;  // if this was a retired child's last call, it ends below
  std::lock_guard lock(mu_);
  last = std::move(calls_.at(call_id).child);
  calls_.erase(call_id);
  return result;
}

void RestartingHandle::cancel(std::uint64_t call_id) {
  std::shared_ptr<Child> child;
  {
    std::lock_guard lock(mu_);
    auto it = calls_.find(call_id);
    if (it == calls_.end()) return;
    it->second.cancel_asked = true;
    cv_.notify_all();
    // The call that is starting the plugin (again) stops that start.
    if (restarting_ && restarted_for_ == call_id && restart_cancel_ != nullptr) {
      restart_cancel_->cancel();
      return;
    }
    child = it->second.child ? it->second.child : child_;
  }
  if (child) child->cancel(call_id);
}

std::string RestartingHandle::run(std::uint64_t id, std::string_view request) {
  auto running_child = running(id);
  if (!running_child) return Result::Error(running_child.error().message()).toText();
  std::shared_ptr<Child> child = std::move(*running_child);
  if (host::Status begun = child->begin(id); !begun)
    return Result::Error(begun.error().message()).toText();
  {
    std::lock_guard lock(mu_);
    calls_.at(id).child = child;
  }
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

bool RestartingHandle::cancelAsked(std::uint64_t id) {
  std::lock_guard lock(mu_);
  return calls_.at(id).cancel_asked;
}

Millis RestartingHandle::backoff(int failures) {
  if (failures == 0) return Millis(0);
  if (failures > 7) return kMaxBackoff;
  return std::min(kFirstBackoff * (1 << (failures - 1)), kMaxBackoff);
}

host::Expected<std::shared_ptr<Child>> RestartingHandle::running(std::uint64_t id) {
  std::unique_lock lock(mu_);
  const std::uint64_t attempts_seen = attempts_;
  // A call cancelled before it was sent still goes out (run() repeats the cancel),
  // unless it would have to wait for a restart.
  cv_.wait(lock, [&] { return !restarting_ || calls_.at(id).cancel_asked; });
  if (restarting_) {
    return host::Error(who_ + ": the call was cancelled while the plugin was being started again");
  }
  const bool alive = child_ && child_->alive();
  // A retired child is replaced at once (it is healthy: no backoff); if its replacement
  // failed to start, it serves on until the backoff allows another try.
  const bool retiring = alive && !child_->retireCause().empty();
  if (alive && (!retiring || Clock::now() < replace_after_)) return child_;
  if (!retiring && attempts_ != attempts_seen && !last_failure_.empty()) {
    return host::Error(last_failure_);  // the restart it waited for failed
  }
  restarting_ = true;
  const Millis delay = retiring ? Millis(0) : backoff(failures_++);
  if (cv_.wait_for(lock, delay, [&] { return calls_.at(id).cancel_asked; })) {
    restarting_ = false;
    cv_.notify_all();
    return host::Error(who_ + ": the call was cancelled while the plugin was being started again");
  }
  // A dead child is released before its successor starts; a retired one after, since its
  // calls in flight go on (the last of them ends it).
  const bool first = !child_ && attempts_ == 0;
  std::shared_ptr<Child> old = std::move(child_);
  plugboard::Cancellation cancel;
  restarted_for_ = id;
  restart_cancel_ = &cancel;
  lock.unlock();
  if (!retiring) old.reset();
  std::shared_ptr<Child> fresh;
  std::string why;
  try {
    fresh = Child::start(launch_, &cancel);
  } catch (const std::exception& e) {
    why = e.what();
  }
  lock.lock();
  restarting_ = false;
  restart_cancel_ = nullptr;
  cv_.notify_all();
  if (cancel.cancelled() && !fresh) {  // says nothing about the plugin: no failure counted
    if (failures_ > 0) --failures_;
    child_ = std::move(old);
    return host::Error(why);
  }
  ++attempts_;
  if (!fresh && retiring) {
    const int failed = ++failures_;
    replace_after_ = Clock::now() + backoff(failed);
    launch_->log.warn(who_ + " could not start a new child (" + why +
                      "); the old one serves on until the next try");
    child_ = std::move(old);
    return child_;
  }
  if (!fresh) {
    last_failure_ =
        who_ + (first ? " could not be started: " : " could not be started again: ") + why;
    launch_->log.warn(last_failure_);
    return host::Error(last_failure_);
  }
  last_failure_.clear();
  launch_->log.info(who_ +
                    (first      ? " started"
                     : retiring ? " started a new child"
                                : " started again") +
                    (delay.count() > 0 ? " after " + host::formatGoDuration(delay) : ""));
  child_ = fresh;
  lock.unlock();
  old.reset();  // a retired child with no call in flight ends here
  return fresh;
}

}  // namespace plugboard::deployer_common

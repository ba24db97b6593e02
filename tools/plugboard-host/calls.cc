// tools/plugboard-host/calls.cc: see calls.h.
#include "calls.h"

#include <algorithm>
#include <new>
#include <utility>

#include <plugboard/host/json_text.h>

#include "allocation.h"

namespace plugboard::host_tool {

using host::Json;

std::shared_ptr<Call> CallTable::add(std::uint64_t id, std::string request) {
  auto call = std::make_shared<Call>();
  call->id = id;
  call->request = std::move(request);
  std::lock_guard lock(mu_);
  calls_[id] = call;
  return call;
}

void CallTable::answerCancelled(Call& call) {
  call.state = Call::State::kAnswered;
  calls_.erase(call.id);
  channel_.post(channel_.resultFrame(
      call.id, R"({"phase":"Error","message":"cancelled before it started"})", false, ""));
}

std::shared_ptr<Call> CallTable::cancel(std::uint64_t id) {
  std::lock_guard lock(mu_);
  auto it = calls_.find(id);
  if (it == calls_.end()) return nullptr;
  std::shared_ptr<Call> call = it->second;
  if (call->state == Call::State::kWaiting && !call->has_thread) {
    answerCancelled(*call);
    return nullptr;
  }
  return call->state == Call::State::kAnswered ? nullptr : call;
}

std::vector<std::shared_ptr<Call>> CallTable::cancelAll() {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<Call>> running, waiting;
  for (const auto& [id, call] : calls_) {
    (call->state == Call::State::kWaiting && !call->has_thread ? waiting : running).push_back(call);
  }
  for (const auto& call : waiting) answerCancelled(*call);
  return running;
}

bool CallTable::inFlight(const Call& call) {
  std::lock_guard lock(mu_);
  return call.state != Call::State::kAnswered;
}

bool CallTable::empty() {
  std::lock_guard lock(mu_);
  return calls_.empty();
}

bool CallTable::start(Call& call) {
  std::lock_guard lock(mu_);
  if (call.state != Call::State::kWaiting) return false;
  call.state = Call::State::kRunning;
  return true;
}

void CallTable::finish(Call& call, std::string frame) {
  std::lock_guard lock(mu_);
  call.state = Call::State::kAnswered;
  if (auto it = calls_.find(call.id); it != calls_.end() && it->second.get() == &call) calls_.erase(it);
  channel_.post(std::move(frame));
}

namespace {

thread_local std::optional<std::uint64_t> t_call;

// The plugin's result for `call`, checked: a result that is not one JSON object, or one
// the runtime refuses for its depth, would break the channel; the runtime gets an Error
// instead. (Raw newlines can only be whitespace in valid JSON.)
std::string checkedResult(Plugin& plugin, const Call& call) {
  std::string result;
  try {
    struct OnThisThread {
      explicit OnThisThread(std::uint64_t id) { t_call = id; }
      ~OnThisThread() { t_call.reset(); }
    };
    {
      const OnThisThread running(call.id);
      result = plugin.instance->execute(call.id, call.request);
    }
    std::replace(result.begin(), result.end(), '\n', ' ');
    if (result.empty() || host::holdsNul(result) || !Json::accept(result)) {
      return Json{{"phase", "Error"}, {"message", "plugin '" + plugin.name + "' returned invalid JSON"}}
          .dump();
    }
    if (host::jsonDeeperThan(result, host::kMaxJsonDepth - 1)) {
      // Its frame nests it one level deeper.
      return Json{{"phase", "Error"},
                  {"message", "plugin '" + plugin.name + "' returned a result " +
                                  host::tooDeepText(host::kMaxJsonDepth - 1)}}
          .dump();
    }
    return result;
  } catch (const std::bad_alloc&) {  // in this host's own handling of the result
    std::string().swap(result);
    markAllocationFailure();
    return R"({"phase":"Error","message":"out of memory while handling the result"})";
  }
}

}  // namespace

void runCall(Plugin& plugin, Channel& channel, CallTable& calls, Call& call) {
  if (!calls.start(call)) return;  // cancelled while it waited: answered already
  clearAllocationFailure();
  const std::string result = checkedResult(plugin, call);
  calls.finish(call, channel.resultFrame(call.id, result, allocationFailedHere(), plugin.name));
}

std::optional<std::uint64_t> callOnThisThread() { return t_call; }

}  // namespace plugboard::host_tool

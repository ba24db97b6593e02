// tools/plugboard-host/host_loop.cc: see host_loop.h.
#include "host_loop.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

namespace plugboard::host_tool {

using host::Json;

int fail(int status, const std::string& message) {
  std::fprintf(stderr, "plugboard-host: %s\n", message.c_str());
  return status;
}

int HostLoop::run() {
  channel_.startLoop();
  for (;;) {
    channel_.flush(deadline_);
    const auto now = Clock::now();
    repeatCancels(now);
    if (deadline_ && (calls_.empty() || now >= *deadline_)) break;
    waitForWork(now);
  }
  channel_.flush(deadline_);  // the results posted as the last calls ended
  return status_;
}

void HostLoop::waitForWork(Clock::time_point now) {
  std::optional<Clock::time_point> until = deadline_;
  for (const auto& r : repeats_) until = until ? std::min(*until, r.next) : r.next;
  int timeout = -1;
  if (until) {
    timeout = static_cast<int>(std::max<std::int64_t>(
        0, std::chrono::ceil<std::chrono::milliseconds>(*until - now).count()));
  }
  pollfd fds[2] = {{channel_.wakeFd(), POLLIN, 0}, {channel_.inputFd(), POLLIN, 0}};
  const int ready = ::poll(fds, reading_ ? 2 : 1, timeout);
  if (ready <= 0) return;  // a timer, or EINTR
  if (fds[0].revents != 0) channel_.drainWake();
  if (reading_ && fds[1].revents != 0) readInput();
}

void HostLoop::readInput() {
  char buf[65536];
  const ssize_t n = ::read(channel_.inputFd(), buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) return endOfInput();
  std::vector<std::string> lines;
  if (auto st = frames_.feed(std::string_view(buf, static_cast<std::size_t>(n)), lines); !st) {
    return stop(fail(2, st.error().message()), kShutdownGrace);
  }
  for (const auto& line : lines) {
    if (!reading_) break;  // a shutdown or an error: what follows is not read
    handle(line);
  }
}

void HostLoop::handle(const std::string& line) {
  auto message = host::parseFrame(line, host::Sender::kRuntime);
  if (!message) return stop(fail(2, message.error().message()), kShutdownGrace);
  const std::string type = (*message)["type"];
  if (type == "hello") return onHello(*message);
  if (!greeted_) return stop(fail(2, "'" + type + "' before 'hello'"), kShutdownGrace);
  if (type == "execute") return onExecute(*message);
  if (type == "cancel") return onCancel((*message)["id"].get<std::uint64_t>());
  if (type == "shutdown") return stop(0, kShutdownGrace);
}

void HostLoop::onHello(const Json& message) {
  bool offered = false;
  for (const auto& v : message["protocols"]) offered = offered || v == host::kProtocolVersion;
  if (!offered) {
    return stop(fail(2, "the runtime offers protocols " + message["protocols"].dump() +
                            "; this host speaks 1"),
                kShutdownGrace);
  }
  // The runtime's frame limit binds both directions from now on.
  if (const auto limit = message.find("frame_limit"); limit != message.end()) {
    frames_.setLimit(limit->get<std::size_t>());
    channel_.setLimit(limit->get<std::size_t>());
  }
  channel_.post(host::frame(
      {{"type", "hello"}, {"protocol", host::kProtocolVersion}, {"manifest", plugin_.manifest}}));
  greeted_ = true;
}

void HostLoop::onExecute(const Json& message) {
  std::shared_ptr<Call> call = calls_.add(message["id"].get<std::uint64_t>(), message["request"].dump());
  call->has_thread = pool_.submit([this, call] { runCall(plugin_, channel_, calls_, *call); });
}

void HostLoop::onCancel(std::uint64_t id) {
  if (std::shared_ptr<Call> call = calls_.cancel(id)) cancelRunning(std::move(call));
}

void HostLoop::cancelRunning(std::shared_ptr<Call> call) {
  plugin_.instance->cancel(call->id);
  for (const auto& r : repeats_) {
    if (r.call == call) return;  // repeated already
  }
  const std::chrono::milliseconds first{1};
  repeats_.push_back({std::move(call), Clock::now() + first, first});
}

void HostLoop::repeatCancels(Clock::time_point now) {
  std::erase_if(repeats_, [&](Repeat& r) {
    if (!calls_.inFlight(*r.call)) return true;
    if (now < r.next) return false;
    // Only this thread adds calls, so the id still names this call: a call it would name
    // next can only come in a frame this thread has not read yet.
    plugin_.instance->cancel(r.call->id);
    r.interval = std::min(r.interval * 2, kCancelRepeatCap);
    r.next = now + r.interval;
    return false;
  });
}

void HostLoop::stop(int status, std::chrono::seconds grace) {
  if (status != 0 && status_ == 0) status_ = status;
  reading_ = false;
  if (!deadline_) deadline_ = Clock::now() + grace;
}

void HostLoop::endOfInput() {
  // The runtime closed the channel or is gone (killed, or it ended without waiting for
  // these calls): no answer can reach it, so the calls in flight are cancelled and get a
  // short while to return, not the wait a shutdown gives them.
  stop(0, kEndOfInputGrace);
  for (auto& call : calls_.cancelAll()) cancelRunning(std::move(call));
}

}  // namespace plugboard::host_tool

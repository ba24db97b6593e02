// tools/plugboard-host/channel.cc: see channel.h.
#include "channel.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>

#include <plugboard/abi.h>

namespace plugboard::host_tool {

using host::Json;

std::unique_ptr<Channel> Channel::open(int input_fd, int output_fd) {
  const int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) return nullptr;
  return std::unique_ptr<Channel>(new Channel(input_fd, output_fd, wake));
}

void Channel::post(std::string frame) {
  std::lock_guard lock(mu_);
  if (!loop_started_) {
    write(frame, std::nullopt);
    return;
  }
  queue_.push_back(std::move(frame));
  if (queue_.size() == 1) wake();  // else the loop was woken for the first and will find it
}

void Channel::wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);  // full only if never drained
}

void Channel::drainWake() {
  std::uint64_t count;
  [[maybe_unused]] ssize_t n = ::read(wake_fd_, &count, sizeof count);
}

void Channel::startLoop() {
  std::lock_guard lock(mu_);
  loop_started_ = true;
}

void Channel::flush(std::optional<Clock::time_point> deadline) {
  std::deque<std::string> frames;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      frames.swap(queue_);
    }
    if (frames.empty()) return;
    for (const auto& f : frames) {
      if (!write(f, deadline) && deadline && Clock::now() >= *deadline) return;
    }
    frames.clear();
  }
}

bool Channel::write(std::string_view f, std::optional<Clock::time_point> deadline) {
  for (std::size_t done = 0; !broken_ && done < f.size();) {
    std::size_t chunk = f.size() - done;
    if (deadline) {
      // Only what the pipe takes without blocking: wait for room until the deadline, then
      // write at most PIPE_BUF bytes, which a pipe with room takes at once.
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
      pollfd p{output_fd_, POLLOUT, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(0, left.count())));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) return false;
      chunk = std::min<std::size_t>(chunk, PIPE_BUF);
    }
    const ssize_t n = ::write(output_fd_, f.data() + done, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) broken_ = true;  // the runtime went away; reading will notice
    else done += static_cast<std::size_t>(n);
  }
  return !broken_;
}

std::string Channel::logFrame(int level, std::string_view text,
                              std::optional<std::uint64_t> call) const {
  const char* name = level <= PLUGBOARD_LOG_DEBUG  ? "debug"
                     : level == PLUGBOARD_LOG_INFO ? "info"
                     : level == PLUGBOARD_LOG_WARN ? "warn"
                                                   : "error";
  const std::size_t limit = limit_;
  Json message = {{"type", "log"}, {"level", name}, {"message", text}};
  if (call) message["id"] = *call;
  std::string f = host::frame(message);
  // Escapes make the frame longer than the text: cut until it fits.
  while (f.size() - 1 > limit && !text.empty()) {
    const std::size_t excess = f.size() - 1 - limit + 64;
    text = text.substr(0, text.size() > excess ? text.size() - excess : 0);
    message["message"] = std::string(text) + " [cut to fit the protocol's frame limit]";
    f = host::frame(message);
  }
  return f;
}

std::string Channel::resultFrame(std::uint64_t id, const std::string& result, bool out_of_memory,
                                 const std::string& plugin_name) const {
  const std::size_t limit = limit_;
  const std::string head = R"({"type":"result","id":)" + std::to_string(id) + R"(,"result":)";
  const std::string tail = out_of_memory ? ",\"out_of_memory\":true}\n" : "}\n";
  const std::size_t size = head.size() + result.size() + tail.size() - 1;
  if (size <= limit) return head + result + tail;
  const Json error = {
      {"phase", "Error"},
      {"message", "plugin '" + plugin_name +
                      "' returned a result too large for the protocol: its frame of " +
                      std::to_string(size) + " bytes exceeds the frame limit of " +
                      std::to_string(limit) + " bytes (the deployer's option 'frame_limit')"}};
  return head + error.dump() + tail;
}

}  // namespace plugboard::host_tool

// tools/plugboard-host/channel.h: the protocol channel of plugboard-host: the runtime's
// descriptor and ours, the frames waiting to be written, and the words of the frames the
// host sends (docs/protocol.md).
//
// Threads. Once HostLoop::run() has called startLoop(), the I/O thread (main's) is the only
// one that reads or writes the descriptors. Every other thread hands it whole frames with
// post(): the call workers their results, the plugin's own threads their log lines. Frames
// are written in the order they were posted, each whole, so none is ever cut into by
// another. Before startLoop() (while the plugin loads, when nothing reads the channel yet)
// post() writes at once, under the same lock, so that a log line of a plugin that then
// hangs while loading still reaches the runtime.
#ifndef PLUGBOARD_TOOLS_PLUGBOARD_HOST_CHANNEL_H_
#define PLUGBOARD_TOOLS_PLUGBOARD_HOST_CHANNEL_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <plugboard/host/protocol.h>

namespace plugboard::host_tool {

namespace host = plugboard::host;

using Clock = std::chrono::steady_clock;

class Channel {
 public:
  // The runtime's frames come on `input_fd`, ours go to `output_fd`. Both stay open for
  // the life of the process. Fails (nullptr) when no wake-up descriptor can be made.
  static std::unique_ptr<Channel> open(int input_fd, int output_fd);

  // --- any thread
  // Queues one whole frame (newline included) for the I/O thread and wakes it.
  void post(std::string frame);
  // Wakes the I/O thread without a frame (a call ended).
  void wake();
  // The frame limit in force (the runtime's hello sets it).
  std::size_t limit() const { return limit_; }
  // A `log` frame for one of the plugin's log lines, cut to fit the frame limit; with the
  // id of the call it was written during, when known.
  std::string logFrame(int level, std::string_view text,
                       std::optional<std::uint64_t> call = std::nullopt) const;
  // The `result` frame of call `id`: `result` (one JSON object's text), or an Error naming
  // the frame limit when the frame would exceed it.
  std::string resultFrame(std::uint64_t id, const std::string& result, bool out_of_memory,
                          const std::string& plugin_name) const;

  // --- the I/O thread
  void startLoop();
  void setLimit(std::size_t limit) { limit_ = limit; }
  int inputFd() const { return input_fd_; }
  int wakeFd() const { return wake_fd_; }
  // Clears the wake-up descriptor after poll() reported it.
  void drainWake();
  // Writes every queued frame in order. Without a deadline it blocks while the runtime's
  // pipe is full (the runtime always reads); with one (the host is ending and the runtime
  // may not read any more) it gives up at the deadline. After a failed write (the runtime
  // is gone) frames are dropped.
  void flush(std::optional<Clock::time_point> deadline);

 private:
  Channel(int input_fd, int output_fd, int wake_fd)
      : input_fd_(input_fd), output_fd_(output_fd), wake_fd_(wake_fd) {}
  // Writes `f` whole; false when the channel is broken or the deadline passed.
  bool write(std::string_view f, std::optional<Clock::time_point> deadline);

  const int input_fd_, output_fd_, wake_fd_;
  std::atomic<std::size_t> limit_{host::kDefaultFrameLimit};
  std::mutex mu_;                 // guards the members below
  bool loop_started_ = false;
  std::deque<std::string> queue_;  // posted, not yet written
  bool broken_ = false;  // a write failed (the runtime is gone); the writing thread's
};

}  // namespace plugboard::host_tool

#endif  // PLUGBOARD_TOOLS_PLUGBOARD_HOST_CHANNEL_H_

// tools/plugboard-host/host_loop.h: plugboard-host's I/O thread: the protocol's side of
// the plugin (docs/protocol.md).
//
// Threads. run() is the I/O thread (main's own). It alone reads the runtime's frames and
// writes the host's (Channel), answers `hello`, puts each `execute` on the CallPool,
// delivers each `cancel` to the plugin the moment it is read, and decides when the host
// ends. It never runs a plugin call. The pool's threads run the calls and hand each result
// back through the CallTable, which posts it on the Channel and wakes this thread.
//
// Cancelling. A `cancel` reaches a running call at once (NativeInstance::cancel). A plugin
// learns of a call only once its execute() has begun, so a cancel may come an instant too
// early for it to see: the host repeats it, after 1 ms and then at doubling intervals up to
// kCancelRepeatCap, until the call answers. Only cancelled calls are repeated; nothing
// wakes while no call is cancelled. A call waiting for a thread (all --threads were busy
// when it came) is answered "cancelled before it started" at once and never runs.
//
// Ending. After `shutdown` or a protocol error the host stops reading and gives the calls
// in flight (waiting ones included) kShutdownGrace to answer; at the end of its input (the
// runtime closed the channel or is gone, so no answer can reach it) it cancels them all and
// gives them kEndOfInputGrace. Then run() returns the exit status; main ends the process
// with the calls that did not answer still running.
#ifndef PLUGBOARD_TOOLS_PLUGBOARD_HOST_HOST_LOOP_H_
#define PLUGBOARD_TOOLS_PLUGBOARD_HOST_HOST_LOOP_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <plugboard/host/protocol.h>

#include "call_pool.h"
#include "calls.h"
#include "channel.h"

namespace plugboard::host_tool {

inline constexpr std::chrono::milliseconds kCancelRepeatCap{64};
inline constexpr std::chrono::seconds kShutdownGrace{10};
inline constexpr std::chrono::seconds kEndOfInputGrace{1};

// Writes "plugboard-host: <message>" on stderr; returns `status`.
int fail(int status, const std::string& message);

class HostLoop {
 public:
  HostLoop(Plugin& plugin, Channel& channel, CallPool& pool)
      : plugin_(plugin), channel_(channel), pool_(pool), calls_(channel) {}

  // Serves until the host should end; returns its exit status (0, or 2 after a protocol
  // error). Call once, on the I/O thread.
  int run();

 private:
  // A cancelled call still running, and when its cancel is repeated next.
  struct Repeat {
    std::shared_ptr<Call> call;
    Clock::time_point next;
    std::chrono::milliseconds interval;
  };

  void readInput();
  void handle(const std::string& line);
  void onHello(const host::Json& message);
  void onExecute(const host::Json& message);
  void onCancel(std::uint64_t id);
  void cancelRunning(std::shared_ptr<Call> call);
  void repeatCancels(Clock::time_point now);
  // Stops reading: the host ends once its calls answered or the grace ran out.
  void stop(int status, std::chrono::seconds grace);
  void endOfInput();
  // Waits for input, a posted frame or a finished call, or the next timer.
  void waitForWork(Clock::time_point now);

  Plugin& plugin_;
  Channel& channel_;
  CallPool& pool_;
  CallTable calls_;
  host::FrameReader frames_;
  bool greeted_ = false;
  bool reading_ = true;
  int status_ = 0;
  std::optional<Clock::time_point> deadline_;  // set when the host is ending
  std::vector<Repeat> repeats_;
};

}  // namespace plugboard::host_tool

#endif  // PLUGBOARD_TOOLS_PLUGBOARD_HOST_HOST_LOOP_H_

// deployers/common/child.h: one child process serving one plugin over protocol v1
// (docs/protocol.md), or over the Wire its Launch brings (wire.h), with several calls in
// flight.
//
// Per child, a reader thread matches results to the waiting calls and forwards log lines,
// and a second thread keeps the tail of the child's stderr for error messages. When the
// child dies or breaks the protocol, every call in flight ends with an Error that names
// the plugin, the cause and that tail. A Child is never started again: its owner starts
// a new one. A child that crossed a limit of its Settings (restart_at_open_files,
// restart_at_threads, restart_after_calls, or an allocation failure it reported) keeps
// serving its calls in flight but says, through retireCause(), that new calls belong in a
// new child. No frame it sends exceeds the frame limit: a larger request fails its own
// call. Thread-safe.
#ifndef PLUGBOARD_DEPLOYERS_COMMON_CHILD_H_
#define PLUGBOARD_DEPLOYERS_COMMON_CHILD_H_

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include <plugboard/host/expected.h>
#include <plugboard/deployer.hpp>
#include <plugboard/sdk.hpp>

#include "deployers/common/launch.h"
#include "deployers/common/settings.h"
#include "deployers/common/wire.h"

namespace plugboard::deployer_common {

// A running plugboard-host and the calls in flight in it. Thread-safe.
class Child {
 public:
  // Starts the plugin's child and completes the hello. Throws std::runtime_error naming
  // the plugin file and why it did not start (exit code or signal, and stderr's tail).
  // `cancel`, when given, stops the start: the child is killed, what its launch left
  // behind removed (Launch::after_end), and the error says the start was cancelled.
  static std::shared_ptr<Child> start(std::shared_ptr<const Launch> launch,
                                      const plugboard::Cancellation* cancel = nullptr);
  // Sends `shutdown`, closes the child's input, kills it if it has not exited within 2 s,
  // reaps it and joins the threads. REQUIRES: no call is waiting in this child.
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  const Json& manifest() const { return manifest_; }
  // The plugin's name from its manifest (empty if it has none).
  const std::string& name() const { return name_; }
  // False once the child has ended or is being killed.
  bool alive() const;
  // Why new calls should go to a new child (a limit it crossed); empty while it may take them.
  std::string retireCause() const;
  // Registers call `id` before its execute frame goes out, counting it against
  // restart_after_calls. Errors: the child has already ended (saying how), or `id` is
  // already in flight.
  host::Status begin(std::uint64_t id);
  // REQUIRES: begin(id) succeeded; `request` is one JSON object. A frame over the frame
  // limit is not sent: the call ends with an Error naming the limit.
  void sendExecute(std::uint64_t id, std::string_view request);
  // Asks call `id` to stop; unless it answers within the cancel grace, kills the child.
  // When its Wire has no way to ask (an empty Wire::cancel()), nothing is waited for: the
  // child is killed at once if the call is alone in it, else the call ends at once with an
  // Error and the child retires (its other calls go on).
  void cancel(std::uint64_t id);
  struct Answer {
    std::string result;     // result JSON text
    bool answered = false;  // false: the child died and `result` is an Error saying why
  };
  // Blocks until call `id` ends. REQUIRES: begin(id) succeeded.
  Answer wait(std::uint64_t id);

 private:
  struct Call {
    bool done = false;
    bool answered = false;
    std::string result;
    std::optional<Clock::time_point> kill_at;  // set by cancel()
  };

  Child(std::shared_ptr<const Launch> launch, Spawned spawned, std::pair<Fd, Fd> wake);
  void readFrames();  // the reader thread
  void readStderr();  // the stderr thread
  // Handles one event of the child's output.
  void handleEvent(WireEvent& event);
  // The reader thread, after results came: retires the child if it holds too many
  // descriptors or threads. At most once per kUsageCheckEvery, from /proc/<pid>/.
  void checkUsage();
  // Records why new calls belong in a new child (the first cause only) and logs it.
  // REQUIRES: mu_ held.
  void retireLocked(const std::string& cause, bool warn);
  void reap();
  void finish();
  // Kills the child (and its process group), recording `cause` unless one is recorded.
  void killFor(const std::string& cause);
  bool send(const std::string& frame);
  void closeInput();
  enum class Ready { kData, kExited, kStop };
  Ready waitReadable(int fd, int exit_fd = -1);
  void wake();
  std::string who() const;

  const std::shared_ptr<const Launch> launch_;
  const pid_t pid_;
  const std::string label_;  // the plugin file's stem, for stderr lines in the log
  unsigned start_ = 0;       // of launch_->starts: 1 for the first child of a launch
  Fd in_, out_, err_, wake_read_, wake_write_;
  const std::unique_ptr<Wire> wire_;
  std::thread reader_, stderr_reader_;

  std::mutex write_mu_;  // one frame at a time on in_; taken before mu_, never after

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::uint64_t, Call> calls_;  // calls in flight
  std::uint64_t calls_begun_ = 0;
  std::string retire_cause_;            // empty while it may take new calls
  Clock::time_point next_usage_check_;  // the reader thread's
  bool greeted_ = false;
  Json manifest_;     // written once by the reader, before greeted_
  std::string name_;  // the plugin's name, from manifest_
  bool closing_ = false;
  std::string kill_cause_;  // why we killed it; empty if we did not
  std::optional<std::uint64_t> kill_for_call_;  // the cancelled call it was killed to stop
  bool reaped_ = false;     // pid_ may be recycled: never signal it again
  std::optional<int> status_;
  bool ended_ = false;  // reaped, and every call in flight ended
  std::string end_cause_, end_tail_;
  std::string stderr_tail_;
  bool stderr_cut_ = false;
  bool stderr_eof_ = false;
};

}  // namespace plugboard::deployer_common

#endif  // PLUGBOARD_DEPLOYERS_COMMON_CHILD_H_

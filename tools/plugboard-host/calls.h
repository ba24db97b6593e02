// tools/plugboard-host/calls.h: the calls in flight in plugboard-host, and running one.
//
// A Call is made by the I/O thread when an `execute` arrives and shared with the pool task
// that runs it. CallTable says where each call is (waiting for a thread, running in the
// plugin, answered) so that the I/O thread and the worker agree on who answers it:
//   * a call cancelled while it waits for a thread (all were busy when it came) is
//     answered by the I/O thread at once and never starts;
//   * a call a thread took when it came runs even if its cancel comes before the thread
//     has entered the plugin: the I/O thread cancels it as a running call (and repeats
//     the cancel until it answers), as a cancel right behind an execute always did;
//   * a call that started is answered by its worker, which posts the result frame and
//     takes the call off the table under one lock, so that once a result is on the
//     channel, the runtime may reuse its id.
// Thread-safe; the table's lock is never held while plugin code runs.
#ifndef PLUGBOARD_TOOLS_PLUGBOARD_HOST_CALLS_H_
#define PLUGBOARD_TOOLS_PLUGBOARD_HOST_CALLS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <plugboard/host/native.h>

#include "channel.h"

namespace plugboard::host_tool {

// The plugin this host serves.
struct Plugin {
  std::shared_ptr<host::NativeLibrary> library;
  std::unique_ptr<host::NativeInstance> instance;
  host::Json manifest;
  std::string name;
  bool serial = false;  // its manifest says "concurrency":"serial"
};

struct Call {
  enum class State { kWaiting, kRunning, kAnswered };
  std::uint64_t id;
  std::string request;          // the request object's JSON text
  State state = State::kWaiting;  // guarded by the CallTable's lock
  bool has_thread = false;      // a thread took it when it came; the I/O thread's
};

class CallTable {
 public:
  explicit CallTable(Channel& channel) : channel_(channel) {}

  // --- the I/O thread
  std::shared_ptr<Call> add(std::uint64_t id, std::string request);
  // The `cancel` of call `id`: a call waiting for a thread is answered "cancelled before
  // it started" at once (and nullptr returned); one running, or about to on the thread
  // that took it, is returned for the caller to cancel in the plugin; an unknown or
  // answered id gives nullptr.
  std::shared_ptr<Call> cancel(std::uint64_t id);
  // Every call: those waiting for a thread answered as above, the others returned.
  std::vector<std::shared_ptr<Call>> cancelAll();
  // Whether `call` is not answered yet.
  bool inFlight(const Call& call);
  bool empty();

  // --- the worker of `call`
  // Whether the call may start (it was not cancelled while it waited); marks it running.
  bool start(Call& call);
  // Posts the call's result frame and takes it off the table.
  void finish(Call& call, std::string frame);

 private:
  void answerCancelled(Call& call);  // REQUIRES: mu_ held

  Channel& channel_;
  std::mutex mu_;  // guards the table and every Call's state
  std::map<std::uint64_t, std::shared_ptr<Call>> calls_;
};

// Runs `call` in the plugin and posts its result: on a pool thread. The result is checked
// (one JSON object, not too deep for its frame) and marked when an allocation failed.
void runCall(Plugin& plugin, Channel& channel, CallTable& calls, Call& call);

// The id of the call this thread runs in the plugin, if any: a log line the plugin writes
// on it belongs to that call (its `log` frame says so).
std::optional<std::uint64_t> callOnThisThread();

}  // namespace plugboard::host_tool

#endif  // PLUGBOARD_TOOLS_PLUGBOARD_HOST_CALLS_H_

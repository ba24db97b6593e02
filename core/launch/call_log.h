// core/launch/call_log.h: the log lines a plugin writes during a call, kept with that call.
//
// A plugin's log line reaches the runtime through its deployer's host services
// (plugboard/abi.h): `log` on the thread that runs the call (a plugin in the runtime's
// process: the native deployer, embedded Python), or `log_call` with the call's id from
// another thread (a plugin in a child process: its deployer reads the line with the id the
// runtime gave the call). While a call runs, a CallLogScope ties its id, and the thread that
// makes it, to the call's CallLog; hostServices() (core/launch/module.h) hands each line to the
// CallLog it belongs to, which keeps it even when the runtime's log level hides it.
//
// LogLines is a value type (thread-compatible); CallLog and the scopes are thread-safe.
#ifndef PLUGBOARD_CORE_LAUNCH_CALL_LOG_H_
#define PLUGBOARD_CORE_LAUNCH_CALL_LOG_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace plugboard::core {

struct LogLine {
  int level = 1;  // plugboard_log_level: 0 debug, 1 info, 2 warn, 3 error
  std::string text;
};

// "debug", "info", "warn" or "error".
std::string_view logLevelName(int level);

// The last kMaxLines lines of a call or step, each cut to kMaxLineBytes: a chatty plugin
// costs at most about kMaxLines * kMaxLineBytes bytes per step. Older lines are dropped
// and counted.
class LogLines {
 public:
  static constexpr std::size_t kMaxLines = 100;
  static constexpr std::size_t kMaxLineBytes = 1024;

  LogLines() = default;
  LogLines(const LogLines& other);
  LogLines(LogLines&&) noexcept = default;
  LogLines& operator=(const LogLines& other);
  LogLines& operator=(LogLines&&) noexcept = default;

  void add(int level, std::string_view text);
  // Appends the lines of `other` (a later call of the same step), its drops counted.
  void append(const LogLines& other) { appendSince(other, 0); }
  // Appends the lines `other` got after its first `seen` (of total()); those it no longer
  // holds count as dropped.
  void appendSince(const LogLines& other, std::size_t seen);
  // The lines kept, oldest first.
  std::vector<LogLine> lines() const;
  bool empty() const { return total() == 0; }
  std::size_t dropped() const { return ring_ ? ring_->total - ring_->lines.size() : 0; }
  std::size_t total() const { return ring_ ? ring_->total : 0; }  // lines written, dropped ones included
  // [{"level":"info","text":"..."}...]
  nlohmann::json toJson() const;

 private:
  struct Ring {
    std::vector<LogLine> lines;  // at most kMaxLines; lines[next] is the oldest when full
    std::size_t next = 0;
    std::size_t total = 0;
  };
  // Out of line, null until the first line: most calls and steps log nothing, and a run
  // holds a LogLines in every node and step (a pointer, not 40 bytes).
  std::unique_ptr<Ring> ring_;
};

// One call's lines, written from any thread while the call runs.
class CallLog {
 public:
  // What the runtime's log names the call by ("step hello"); set before the call. Only a
  // log given a label keeps lines (a call nobody reads the lines of costs nothing).
  void setLabel(std::string label);
  std::string label() const;
  bool wanted() const { return wanted_.load(std::memory_order_relaxed); }
  void add(int level, std::string_view text);
  // The lines so far; the log starts empty again.
  LogLines take();

 private:
  mutable std::mutex mu_;
  std::atomic<bool> wanted_{false};
  std::string label_;
  LogLines lines_;
};

// Ties call `call_id` and the calling thread to `log` until destroyed. Call ids must be
// unique in the process while their calls run (PluginHandle::newCallId()). `log` may be
// null: nothing is tied.
class CallLogScope {
 public:
  CallLogScope(std::uint64_t call_id, CallLog* log);
  ~CallLogScope();
  CallLogScope(const CallLogScope&) = delete;
  CallLogScope& operator=(const CallLogScope&) = delete;

 private:
  std::uint64_t call_id_;
  CallLog* log_;
  CallLog* outer_;  // the thread's log before this scope
};

// The log of call `call_id` (0: the call this thread is making), or null. It stays valid
// while the returned lock is held (a scope ending waits for it).
struct CallLogFound {
  std::unique_lock<std::mutex> lock;
  CallLog* log = nullptr;
};
CallLogFound findCallLog(std::uint64_t call_id);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_LAUNCH_CALL_LOG_H_

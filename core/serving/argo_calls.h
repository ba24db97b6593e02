// core/serving/argo_calls.h: Argo template.execute calls that outlive their request, each
// run once however often Argo sends it.
//
// Argo's agent gives up on a request after 30 s and sends it again while the first call
// still runs, and it sends a requeued task again after the requeue delay. So a call is
// identified by its work, not by its request: the key is the SHA-256 of the request body
// as received (Argo's body holds the workflow's name, namespace and uid and the template,
// so two bodies of one workflow differ exactly when their templates do). The first
// request with a key starts the call; it and every other request with that key are
// answered the call's outcome when it ends, or nothing (the caller answers Running) at
// their reply deadline, a timer on the AlarmClock (core/base/clock.h), while the call goes
// on. Nothing blocks: answers are callbacks.
//
// What is kept is the reply's text, not the plugin's outcome: the answer is written once
// per call, and a kept entry is about the size of its reply.
//
// Succeeded outcomes are kept for `keep_for` after they ended, at most `limits.count` of
// them and `limits.bytes` of their replies together (the oldest go first), so that a
// request sent again after a lost reply gets the same answer; a reply larger than
// `limits.max_reply` is not kept at all (sent again, its call runs again). Any other outcome (Running or Pending from the plugin, which asks to be
// called again; Failed or Error, which Argo's retryStrategy retries with the same body; a
// template not handled here) goes to the requests that wait for it, or, when the request
// that ran the call was answered before it ended, to the next request with its key; it is
// then dropped. Calls in flight are never dropped.
//
// Thread-safe. The table holds no thread: a call runs wherever `run` puts it (the server:
// its WorkPool), and answers run on the thread that ended the call, on the clock's timer
// thread (the reply deadline) or within execute() (an outcome already there).
#ifndef PLUGBOARD_CORE_SERVING_ARGO_CALLS_H_
#define PLUGBOARD_CORE_SERVING_ARGO_CALLS_H_

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/clock.h"
#include "core/base/duration.h"

namespace plugboard::core {

class ArgoCalls {
 public:
  struct Limits {
    std::size_t count;      // outcomes kept
    std::size_t bytes;      // their replies' bytes together
    std::size_t max_reply;  // the largest reply kept
  };
  // REQUIRES: `clock` outlives the table.
  ArgoCalls(AlarmClock& clock, Millis reply_deadline, Millis keep_for, Limits limits);
  ~ArgoCalls();
  ArgoCalls(const ArgoCalls&) = delete;
  ArgoCalls& operator=(const ArgoCalls&) = delete;

  // What a call is answered.
  struct Reply {
    std::string body;  // the JSON text of Argo's ExecuteTemplateReply, or of the refusal
    bool succeeded;    // only such replies are kept for requests sent again
    bool refused = false;  // the call was not made (core/serving/bulkheads.h): body is the error
  };
  // Starts the call; it calls `finish` once, from any thread, when the call ended.
  using Finish = std::function<void(Reply)>;
  using Run = std::function<void(Finish finish)>;
  // A request's answer, once: the outcome, or nullopt at the reply deadline.
  using Answer = std::function<void(std::optional<Reply>)>;

  // A call's key: the SHA-256 of its request's body.
  using Key = std::array<unsigned char, 32>;
  static Key keyOf(std::string_view body);

  // The reply of the call with `key` when it succeeded and is kept; nothing runs or waits.
  // Lets a request sent again be answered before its body is parsed.
  std::optional<std::string> kept(const Key& key);

  // Answers the request for the call `key`. When no call with its key runs or is kept,
  // `run` starts it.
  void execute(const Key& key, const Run& run, Answer answer);
  void execute(std::string_view body, const Run& run, Answer answer) {
    execute(keyOf(body), run, std::move(answer));
  }

  // Calls running plus outcomes kept.
  std::size_t entries() const;

  // The finished outcomes kept (successes, and others not yet handed to a request) and the
  // bytes of their replies.
  struct Kept {
    std::size_t count;
    std::size_t bytes;
  };
  Kept kept() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;  // shared with the calls and timers, which may outlive it
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_SERVING_ARGO_CALLS_H_

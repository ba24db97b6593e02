// core/serving/argo_calls.h: Argo template.execute calls that outlive their request, each
// run once however often Argo sends it.
//
// Argo's agent gives up on a request after 30 s and sends it again while the first call
// still runs, and it sends a requeued task again after the requeue delay. So a call is
// identified by its work, not by its request: the key is the SHA-256 of the request body
// as received (Argo's body holds the workflow's name, namespace and uid and the template,
// so two bodies of one workflow differ exactly when their templates do). The first
// request with a key runs the call on its own thread; every other request with that key
// waits for the call's outcome until the reply deadline at most, and is then answered
// Running (the caller does that, on nullopt) while the call goes on. The request that
// runs the call is answered Running at the reply deadline by its transport (see
// SlowCallHelp::answerNow in core/serving/http_router.h).
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
// Thread-safe. Calls run on their callers' threads, so the table holds no thread.
#ifndef PLUGBOARD_CORE_SERVING_ARGO_CALLS_H_
#define PLUGBOARD_CORE_SERVING_ARGO_CALLS_H_

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/duration.h"

namespace plugboard::core {

// What a request whose call turns out slow tells its transport, without the transport's
// types: the HTTP router's SlowCallHelp (core/serving/http_router.h) is one, and adds a
// way to answer early. One object per call in flight.
class SlowCallNotice {
 public:
  virtual ~SlowCallNotice() = default;
  // Once, when the call (or the wait for it) has run for defaults::kSlowCall, on the
  // deadline watcher's thread or on the waiting thread. Must be quick.
  virtual void callIsSlow() = 0;
  // On the calling thread when the call returned (whether or not it was slow).
  virtual void callEnded() = 0;
};

class ArgoCalls {
 public:
  struct Limits {
    std::size_t count;      // outcomes kept
    std::size_t bytes;      // their replies' bytes together
    std::size_t max_reply;  // the largest reply kept
  };
  ArgoCalls(Millis reply_deadline, Millis keep_for, Limits limits);
  ~ArgoCalls();
  ArgoCalls(const ArgoCalls&) = delete;
  ArgoCalls& operator=(const ArgoCalls&) = delete;

  // What a call is answered.
  struct Reply {
    std::string body;  // the JSON text of Argo's ExecuteTemplateReply
    bool succeeded;    // only such replies are kept for requests sent again
  };
  // Runs the call; sets `answered` when its request was answered before the call returned.
  using Run = std::function<Reply(bool& answered)>;

  // A call's key: the SHA-256 of its request's body.
  using Key = std::array<unsigned char, 32>;
  static Key keyOf(std::string_view body);

  // The reply of the call with `key` when it succeeded and is kept; nothing runs or waits.
  // Lets a request sent again be answered before its body is parsed.
  std::optional<std::string> kept(const Key& key);

  // The outcome of the call `body` (whose key is `key`) asks for. When no call with its
  // key runs or is kept, `run` runs it on this thread and its outcome is returned.
  // Otherwise waits for the running call until the reply deadline at most: nullopt when
  // it still runs then. `help`, when given, is told if that wait is slow (the waiting
  // thread holds up an event loop).
  std::optional<Reply> execute(const Key& key, const Run& run, SlowCallNotice* help);
  std::optional<Reply> execute(std::string_view body, const Run& run, SlowCallNotice* help) {
    return execute(keyOf(body), run, help);
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
  std::unique_ptr<Impl> impl_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_SERVING_ARGO_CALLS_H_

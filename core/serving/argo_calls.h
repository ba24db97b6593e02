// core/serving/argo_calls.h: Argo template.execute calls that outlive their request, each
// run once however often Argo sends it.
//
// Argo's agent gives up on a request after 30 s and sends it again while the first call
// still runs, and it sends a requeued task again after the requeue delay. So a call is
// identified by its work, not by its request: the key is the SHA-256 of the request body
// as received (Argo's body holds the workflow's name, namespace and uid and the template,
// so two bodies of one workflow differ exactly when their templates do). The first
// request with a key starts the call on a pool thread; every request with that key waits
// for the call's outcome until the reply deadline at most. A request answered before the
// call ended gets nullopt (the caller answers Running, requeued) and the call goes on; a
// later request with the same key gets its outcome once done.
//
// Succeeded outcomes are kept for `keep_for` after they ended and at most `keep_count` of
// them (the oldest go first), so that a request sent again after a lost reply gets the
// same answer. Any other outcome (Running or Pending from the plugin, which asks to be
// called again; Failed or Error, which Argo's retryStrategy retries with the same body; a
// template not handled here) goes to the requests waiting for it, or else to the next
// request with its key, and is then dropped. Calls in flight are never dropped.
//
// Threads: a call runs on a pool thread; the pool starts a thread when none is idle and an
// idle thread leaves after a while, so it holds about as many threads as calls in flight.
// Thread-safe; the destructor waits for the calls in flight.
#ifndef PLUGBOARD_CORE_SERVING_ARGO_CALLS_H_
#define PLUGBOARD_CORE_SERVING_ARGO_CALLS_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "core/base/duration.h"
#include "core/routing/dispatcher.h"

namespace plugboard::core {

class SlowCallHelp;

class ArgoCalls {
 public:
  ArgoCalls(Millis reply_deadline, Millis keep_for, std::size_t keep_count);
  ~ArgoCalls();
  ArgoCalls(const ArgoCalls&) = delete;
  ArgoCalls& operator=(const ArgoCalls&) = delete;

  // The outcome of the call `body` asks for: `run` runs it on a pool thread unless a call
  // with the same key runs or is kept. Waits until the reply deadline at most; nullopt
  // when the call still runs then. `help`, when given, is told if the wait is slow (the
  // waiting thread holds up an event loop).
  std::optional<Dispatch> execute(std::string_view body, std::function<Dispatch()> run,
                                  SlowCallHelp* help);

  // Calls running plus outcomes kept.
  std::size_t entries() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_SERVING_ARGO_CALLS_H_

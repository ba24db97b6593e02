// core/serving/http_server.h: `plugboard serve`, Argo's executor-plugin HTTP protocol and the
// runtime's own endpoints, on Boost.Beast.
//
//   POST /api/v1/template.execute   ExecuteTemplateArgs -> ExecuteTemplateReply; `{}` when
//                                   no hosted plugin handles the template
//   POST /api/v1/<other>            404 (Argo then stops calling that method)
//   GET  /api/v1/plugins            the catalog with per-plugin state and counters
//   POST /api/v1/plugins/<name>/<rpc>  a direct call; the body is the args
//   GET  /healthz, /readyz, /metrics   liveness, readiness, Prometheus text
//
// HTTP/1.1 with keep-alive on Asio's event loops, one per I/O thread; the I/O threads only
// do I/O. Plugin calls run on the server's WorkPool of `call_threads` (core/base/work_pool.h,
// the server is its owner), and each answer is posted back to its connection's strand. A
// call's deadline and an Argo request's reply deadline (core/serving/argo_calls.h) are
// timers on the pool's clock. So a slow plugin holds one pool thread, never a loop.
// What each request is answered is decided by core/serving/http_router.h, without sockets.
// With a token, /api/v1/* needs "Authorization: Bearer <token>" (403 otherwise). Bad
// JSON or shape: 400 with {"error": ...}; a body over the limit: 413; during shutdown:
// 503. Idle connections are closed after `idle_timeout`.
//
// At most `max_connections` connections are served at once: one beyond them is answered
// 503 (Retry-After: 1, Connection: close) without being read and closed. When accept()
// fails for want of descriptors or memory, accepting pauses (100 ms, doubling up to
// 1.6 s while it goes on) and the log gets a line at the start, at most one per 10 s
// after, and one when accepting works again (core/serving/accept_limits.h).
//
// Thread-safety: start() and shutdown() from one thread; everything else is internal.
// A call that ignores its deadline keeps its pool thread until `kCancelGrace` after it,
// when the pool puts another in its place.
#ifndef PLUGBOARD_CORE_SERVING_HTTP_SERVER_H_
#define PLUGBOARD_CORE_SERVING_HTTP_SERVER_H_

#include <map>
#include <memory>
#include <string>

#include "core/base/defaults.h"
#include "core/base/duration.h"
#include "core/base/expected.h"
#include "core/routing/live_runtime.h"
#include "core/serving/bulkheads.h"

namespace plugboard::core {

struct ServerOptions {
  std::string listen{defaults::kListen};  // host:port; port 0 picks a free one
  std::string token;                      // empty: no authentication
  std::size_t body_limit = defaults::kBodyLimit;
  Millis default_timeout = defaults::kTimeout;
  Millis poll_interval = defaults::kPollInterval;
  Millis reply_deadline = defaults::kReplyDeadline;  // Argo requests: answered Running after it
  Millis keep_outcomes_for = defaults::kKeepOutcomesFor;
  std::size_t keep_outcomes = defaults::kKeepOutcomes;
  std::size_t keep_outcomes_bytes = defaults::kKeepOutcomesBytes;
  std::size_t keep_outcome_max_bytes = defaults::kKeepOutcomeMaxBytes;
  Millis grace_period = defaults::kGracePeriod;
  Millis idle_timeout = defaults::kIdleTimeout;
  // A template for a key no hosted plugin has: poll the hosted plugins (true) or answer
  // `{}` at once (false). Either way an unhosted key never gets an error node.
  bool poll_unknown = defaults::kPollUnknown;
  int threads = defaults::kWorkers;  // I/O threads; 0: one per core
  int call_threads = defaults::kCallThreads;  // plugin calls running at once
  // Each plugin's share of them (core/serving/bulkheads.h), and overrides by lower-case
  // plugin name.
  BulkheadLimits plugin_limits{defaults::kPluginCalls, defaults::kPluginQueue};
  std::map<std::string, BulkheadLimits> plugin_limits_by_name;
  // Connections served at once; beyond them 503 and closed. 0: from the descriptor limit
  // (core/serving/accept_limits.h).
  std::size_t max_connections = defaults::kMaxConnections;
};

class HttpServer {
 public:
  // REQUIRES: `runtime` outlives the server.
  HttpServer(LiveRuntime& runtime, ServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts accepting. Returns the bound "host:port".
  Expected<std::string> start();
  // Stops accepting and answers 503 to new requests from now on (readiness included);
  // calls in flight go on. Idempotent; shutdown() begins with it.
  void drain();
  // Drains, lets calls in flight finish within the grace period, closes every connection.
  // Returns the number of calls still running when the grace period ended.
  int shutdown();
  // The clock that keeps the server's deadlines (its pool's), for what must share them
  // (the live runtime's debounce, LiveRuntime::start()).
  AlarmClock& clock();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads a bearer token file (Argo mounts one at /var/run/argo/token); trailing
// whitespace is dropped.
Expected<std::string> readTokenFile(const std::filesystem::path& file);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_SERVING_HTTP_SERVER_H_

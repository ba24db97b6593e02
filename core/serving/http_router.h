// core/serving/http_router.h: what `plugboard serve` answers to a request, without the sockets.
// Internal to the HTTP server (core/serving/http_server.h); tests drive it in-process.
//
// handle() takes a parsed request (method, target, headers, body) and returns the
// response (status, headers, body): the Argo endpoint, /api/v1/plugins (with each plugin's
// deployer and latency percentiles, and the latest reloads), direct calls, /healthz,
// /readyz, /metrics, the status page at / and /ui (core/serving/status_page.h), the token
// check and every error status. A template whose
// key no hosted plugin has is answered {} without a call unless `poll_unknown` is set; a
// poll for it that ends in Error is counted and answered {} too. Requests that could not
// be read get their answer from readFailed(). The router runs every plugin call on the
// server's WorkPool (core/base/work_pool.h) with the configured call deadline, a timer on
// the AlarmClock, Argo's template.execute calls through core/serving/argo_calls.h (each
// run once however often Argo sends it, answered Running at the reply deadline while it
// goes on); it counts calls per plugin and responses by status for /metrics. Nothing in
// handle() blocks: an answer that needs a call is given to `respond` when it is there.
//
// Thread-safety: every member may be called from any thread at once, except that
// drain() and waitForCalls() are meant for the one thread that shuts the server down.
#ifndef PLUGBOARD_CORE_SERVING_HTTP_ROUTER_H_
#define PLUGBOARD_CORE_SERVING_HTTP_ROUTER_H_

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <boost/beast/http.hpp>

#include "core/base/clock.h"
#include "core/base/work_pool.h"
#include "core/routing/live_runtime.h"
#include "core/routing/timed_dispatch.h"
#include "core/serving/argo_calls.h"
#include "core/serving/bulkheads.h"
#include "core/serving/http_server.h"

namespace plugboard::core {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;
using HttpParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

class HttpRouter {
 public:
  // REQUIRES: `runtime`, `pool` and `clock` outlive the router, and the pool has ended
  // its tasks before the router is destroyed. Uses `options`' token, body_limit,
  // default_timeout, poll_interval, reply_deadline and keep_outcome*.
  HttpRouter(LiveRuntime& runtime, const ServerOptions& options, WorkPool& pool,
             AlarmClock& clock);
  ~HttpRouter();
  HttpRouter(const HttpRouter&) = delete;
  HttpRouter& operator=(const HttpRouter&) = delete;

  // Gets the answer to `req` to `respond`, once: before handle() returns when no plugin call
  // is needed (or a kept outcome answers), else later from the pool's thread or the
  // clock's. `req` may be gone once handle() returned. Responses are counted by
  // countResponse(), not here.
  using Respond = std::function<void(HttpResponse)>;
  void handle(const HttpRequest& req, Respond respond);

  // Sets the body and header limits on a parser before it reads a request.
  void limit(HttpParser& parser) const;
  // The answer to a request that could not be read with the error `ec` (413, 431, 400);
  // nullopt when the connection should just be closed (the peer left, or shutdown).
  std::optional<HttpResponse> readFailed(const boost::system::error_code& ec) const;
  // The same for `parser`, which failed with `ec` leaving `unread` in the buffer. Headers
  // over the limit are answered as if the bytes had arrived at once: a parser handed bytes
  // in pieces looks at the header again only once its end has come, so a byte it would
  // have refused (400) is found only when the header arrived whole, else the limit (431)
  // is met first; the header's bytes are read again in one piece to tell which.
  std::optional<HttpResponse> readFailed(const boost::system::error_code& ec,
                                         const HttpParser& parser, std::string_view unread) const;
  // Counts a response about to be sent, for /metrics.
  void countResponse(const HttpResponse& res);

  // The address the server listens on, for /api/v1/plugins' "server". REQUIRES: called
  // before the first request is handled (the server does, once it is bound).
  void setListening(std::string address) { listening_ = std::move(address); }

  // From now on every request is answered 503.
  void drain() { draining_ = true; }
  bool draining() const { return draining_; }
  // Waits until no call is in flight or `grace` has passed; returns the calls still
  // running. REQUIRES: drain() was called.
  int waitForCalls(Millis grace);

 private:
  struct PluginStats;
  PluginStats& statsFor(const std::string& plugin);
  // An Argo request's answer before its call returned: Running, requeued.
  HttpResponse stillRunning(unsigned version) const;
  // What a request's key reaches in the current generation: resolved once, then called.
  struct Routed {
    std::shared_ptr<Dispatcher> generation;  // held until the call returns
    Route route;
    // Whether a plugin of this generation has the key, or several claim it.
    bool hosted() const {
      return route.kind == Route::Kind::kPlugin || route.kind == Route::Kind::kConflict;
    }
  };
  Routed routed(const DispatchRequest& request) const;
  // Runs `request` where `to` routes it, on the pool with the call deadline, once its
  // plugin's bulkhead gives it a place; `done` gets the result there. A call refused a
  // place, or not started by then, gets a Dispatch with `not_started` set.
  void call(Routed to, DispatchRequest request, std::function<void(Dispatch)> done);
  // The call itself, once it has its place; `start_by`: see TimedCalls::dispatch().
  void run(Routed to, DispatchRequest request, std::function<void(Dispatch)> done,
           std::optional<Clock::TimePoint> start_by);
  // /readyz's body: "ready", then a line per plugin that had calls: its calls in flight and
  // queued against their bounds, and its refusals.
  std::string readiness() const;
  void execute(const HttpRequest& req, Respond& respond);
  // True (logged and counted) when `d` polled for a key no hosted plugin has and ended in
  // Error (a load failure among them) or at its deadline: the template may be another
  // sidecar's, so the answer is {}.
  bool pollFailed(const Dispatch& d);
  // These answer at once by returning, or take `respond` (leaving it empty) to answer later.
  HttpResponse answer(const HttpRequest& req, Respond& respond);
  HttpResponse direct(const HttpRequest& req, std::string_view rest, Respond& respond);
  bool authorized(const HttpRequest& req) const;
  Json pluginList();
  std::string metrics();

  LiveRuntime& runtime_;
  const std::string bearer_;  // "Bearer <token>"; empty: no token required
  const std::size_t body_limit_;
  const Millis timeout_;
  const Millis poll_interval_;
  const Millis reply_deadline_;
  const std::string still_running_;  // the body of stillRunning()
  const bool poll_unknown_;
  const std::uint64_t id_;  // tells routers apart in per-thread caches
  AlarmClock& clock_;
  const std::chrono::system_clock::time_point started_;  // for uptime, /metrics' start time
  const std::chrono::steady_clock::time_point started_steady_;
  std::string listening_;  // set once before serving (setListening)
  TimedCalls calls_;
  std::atomic<bool> draining_{false};
  std::atomic<int> calls_in_flight_{0};
  std::array<std::atomic<std::uint64_t>, 600> responses_{};  // by status code

  std::mutex mu_;  // guards stats_; signals cv_ when the last call ends while draining
  std::condition_variable cv_;
  std::map<std::string, std::unique_ptr<PluginStats>> stats_;  // entries are never removed
  ArgoCalls argo_calls_;
  // How long a call may wait for its place and a thread: well before the reply deadline,
  // so that a call not started is refused, never answered Running.
  const Millis queue_wait_;
  Bulkheads bulkheads_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_SERVING_HTTP_ROUTER_H_

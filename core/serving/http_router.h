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
// be read get their answer from readFailed(). The router runs every call on the calling
// thread with the configured call deadline, Argo's template.execute calls through
// core/serving/argo_calls.h (each run once however often Argo sends it, answered Running
// at the reply deadline through SlowCallHelp::answerNow while it goes on); it counts calls per
// plugin and responses by status for /metrics.
//
// Thread-safety: every member may be called from any thread at once, except that
// drain() and waitForCalls() are meant for the one thread that shuts the server down.
#ifndef PLUGBOARD_CORE_SERVING_HTTP_ROUTER_H_
#define PLUGBOARD_CORE_SERVING_HTTP_ROUTER_H_

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <boost/beast/http.hpp>

#include "core/serving/argo_calls.h"
#include "core/serving/http_server.h"
#include "core/routing/live_runtime.h"
#include "core/routing/timed_dispatch.h"

namespace plugboard::core {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;
using HttpParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

// What the transport lends a call that turns out slow (the server: a helper thread for
// the event loop the call holds up, on callIsSlow(), and a way to answer before the call
// returns). One object per call in flight.
class SlowCallHelp : public SlowCallNotice {
 public:
  // Once at most, on the deadline watcher's thread, when an Argo call has run for the
  // reply deadline: the transport sends `res` (Running, requeued) as the request's answer
  // now, and ends the connection once the call returned; what handle() then returns is
  // not sent. Must be quick.
  virtual void answerNow(HttpResponse res) = 0;
};

class HttpRouter {
 public:
  // REQUIRES: `runtime` outlives the router. Uses `options`' token, body_limit,
  // default_timeout and poll_interval.
  HttpRouter(LiveRuntime& runtime, const ServerOptions& options);
  ~HttpRouter();
  HttpRouter(const HttpRouter&) = delete;
  HttpRouter& operator=(const HttpRouter&) = delete;

  // The answer to `req`. A plugin call runs on this thread; `help`, when given, is told
  // if it is slow. Responses are counted by countResponse(), not here.
  HttpResponse handle(const HttpRequest& req, SlowCallHelp* help = nullptr);

  // Sets the body and header limits on a parser before it reads a request.
  void limit(HttpParser& parser) const;
  // The answer to a request that could not be read with the error `ec` (413, 431, 400);
  // nullopt when the connection should just be closed (the peer left, or shutdown).
  std::optional<HttpResponse> readFailed(const boost::system::error_code& ec) const;
  // Counts a response about to be sent, for /metrics.
  void countResponse(const HttpResponse& res);

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
  struct EarlyAnswer {
    SlowCallHelp* help;     // sends it
    unsigned version;       // the request's HTTP version
    bool answered = false;  // set when it was sent
  };
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
  // Runs `request` where `to` routes it, on this thread with the call deadline. With
  // `early`, the transport is told to send it at the reply deadline.
  Dispatch call(const Routed& to, const DispatchRequest& request, SlowCallHelp* help,
                EarlyAnswer* early = nullptr);
  HttpResponse execute(const HttpRequest& req, SlowCallHelp* help);
  // True (logged and counted) when `d` polled for a key no hosted plugin has and ended in
  // Error (a load failure among them) or at its deadline: the template may be another
  // sidecar's, so the answer is {}.
  bool pollFailed(const Dispatch& d);
  HttpResponse direct(const HttpRequest& req, std::string_view rest, SlowCallHelp* help);
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
  DeadlineWatch deadlines_;
  std::atomic<bool> draining_{false};
  std::atomic<int> calls_in_flight_{0};
  std::array<std::atomic<std::uint64_t>, 600> responses_{};  // by status code

  std::mutex mu_;  // guards stats_; signals cv_ when the last call ends while draining
  std::condition_variable cv_;
  std::map<std::string, std::unique_ptr<PluginStats>> stats_;  // entries are never removed
  // Last: destroyed first, it waits for its calls, which use the members above.
  ArgoCalls argo_calls_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_SERVING_HTTP_ROUTER_H_

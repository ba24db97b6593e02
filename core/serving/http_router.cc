#include "core/serving/http_router.h"

#include <chrono>
#include <ctime>
#include <sstream>
#include <unordered_map>

#include <openssl/crypto.h>
#include <plugboard/host/json_text.h>
#include <spdlog/spdlog.h>
#include <boost/asio/error.hpp>

#include "core/base/build_info.h"
#include "core/base/text.h"
#include "core/serving/argo.h"
#include "core/serving/metrics_text.h"
#include "core/serving/status_page.h"

namespace plugboard::core {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using Steady = std::chrono::steady_clock;

constexpr std::array<double, 11> kBuckets = {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05,
                                             0.1,    0.5,    1,     5,     30};

HttpResponse json(http::status status, const Json& body, unsigned version) {
  HttpResponse res{status, version};
  res.set(http::field::content_type, "application/json");
  res.body() = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  return res;
}

HttpResponse text(http::status status, std::string body, unsigned version,
                  const char* type = "text/plain; charset=utf-8") {
  HttpResponse res{status, version};
  res.set(http::field::content_type, type);
  res.body() = std::move(body);
  return res;
}

HttpResponse error(http::status status, const std::string& message, unsigned version) {
  return json(status, {{"error", message}}, version);
}

// A call that was not made (its plugin's bulkhead, core/serving/bulkheads.h): 503, which
// Argo's agent takes for a transient error and sends again after a backoff.
HttpResponse refused(std::string body, unsigned version) {
  HttpResponse res =
      text(http::status::service_unavailable, std::move(body), version, "application/json");
  res.set(http::field::retry_after, "1");
  return res;
}

// The body of a call that was not made: {"error": message}.
std::string refusalBody(const std::string& message) {
  std::string out = R"({"error":)";
  appendJsonString(out, message);
  out += '}';
  return out;
}

std::string isoTime(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&secs));
  return buf;
}

// The q-quantile of the latencies counted in `buckets` (cumulative, by kBuckets' upper
// bounds) in seconds, interpolated within its bucket as Prometheus' histogram_quantile()
// does; past the last bound, that bound. Null without calls.
Json quantile(double q, const std::array<std::atomic<std::uint64_t>, kBuckets.size()>& buckets,
              std::uint64_t calls) {
  if (calls == 0) return nullptr;
  const double rank = q * static_cast<double>(calls);
  double lower = 0, below = 0;
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    const auto count = static_cast<double>(buckets[i].load());
    if (count >= rank && count > below) {
      return lower + (kBuckets[i] - lower) * (rank - below) / (count - below);
    }
    lower = kBuckets[i];
    below = count;
  }
  return kBuckets.back();
}

Json versionOrNull(const std::string& version) {
  return version.empty() ? Json(nullptr) : Json(version);
}

}  // namespace

namespace {

// The phases a call's outcome can end in, as /metrics and /api/v1/plugins count them;
// Succeeded, Failed and Error are always written, the others once seen.
constexpr std::array<Phase, 6> kPhases = {Phase::kSucceeded, Phase::kFailed,  Phase::kError,
                                          Phase::kRunning,   Phase::kPending, Phase::kNotHandled};

std::size_t phaseIndex(Phase phase) {
  for (std::size_t i = 0; i < kPhases.size(); ++i) {
    if (kPhases[i] == phase) return i;
  }
  return 2;  // never reached: every phase is listed
}

}  // namespace

struct HttpRouter::PluginStats {
  std::atomic<std::uint64_t> calls{0};
  std::array<std::atomic<std::uint64_t>, kPhases.size()> by_phase{};
  std::uint64_t phase(Phase p) const { return by_phase[phaseIndex(p)].load(); }
  std::atomic<std::uint64_t> poll_errors{0};  // Errors of polls for keys hosted elsewhere
  std::array<std::atomic<std::uint64_t>, kBuckets.size()> buckets{};
  std::atomic<std::uint64_t> micros{0};
};

HttpRouter::HttpRouter(LiveRuntime& runtime, const ServerOptions& options, WorkPool& pool,
                       AlarmClock& clock)
    : runtime_(runtime),
      bearer_(options.token.empty() ? "" : "Bearer " + options.token),
      body_limit_(options.body_limit),
      timeout_(options.default_timeout),
      poll_interval_(options.poll_interval),
      reply_deadline_(options.reply_deadline),
      still_running_(executeTemplateReply(
          {Phase::kRunning, "the call is still running", Json::object(), {}}, poll_interval_)),
      poll_unknown_(options.poll_unknown),
      id_([] {
        static std::atomic<std::uint64_t> routers{0};
        return ++routers;
      }()),
      clock_(clock),
      started_(std::chrono::system_clock::now()),
      started_steady_(Steady::now()),
      calls_(pool, clock),
      argo_calls_(
          clock, options.reply_deadline, options.keep_outcomes_for,
          {options.keep_outcomes, options.keep_outcomes_bytes, options.keep_outcome_max_bytes}),
      queue_wait_(std::min(options.reply_deadline / 2, options.default_timeout)),
      bulkheads_(clock, options.plugin_limits, options.plugin_limits_by_name, queue_wait_) {}

HttpRouter::~HttpRouter() = default;

HttpRouter::PluginStats& HttpRouter::statsFor(const std::string& plugin) {
  // Each thread remembers the entries it used, so a call takes no lock after the first.
  thread_local std::unordered_map<std::string, PluginStats*> cache;
  thread_local std::uint64_t cache_owner = 0;
  if (cache_owner != id_) {
    cache.clear();
    cache_owner = id_;
  }
  if (auto it = cache.find(plugin); it != cache.end()) return *it->second;
  std::lock_guard lock(mu_);
  auto& s = stats_[plugin];
  if (!s) s = std::make_unique<PluginStats>();
  cache.emplace(plugin, s.get());
  return *s;
}

HttpResponse HttpRouter::stillRunning(unsigned version) const {
  return text(http::status::ok, still_running_, version, "application/json");
}

HttpRouter::Routed HttpRouter::routed(const DispatchRequest& request) const {
  // The call holds its generation of plugins until it returns: a reload meanwhile sends
  // new calls to the new version while this one finishes on the old.
  Routed to{runtime_.current(), {}};
  to.route = to.generation->resolve(
      {.key = request.key, .version = request.version, .rpc = request.rpc});
  return to;
}

void HttpRouter::call(Routed to, DispatchRequest request, std::function<void(Dispatch)> done) {
  // The bulkhead of the plugin the call reaches; a route that reaches none (a conflict, or
  // nothing) is answered at once and needs no place.
  std::string bulkhead;
  if (to.route.kind == Route::Kind::kPlugin || to.route.kind == Route::Kind::kTarget) {
    bulkhead = to.route.plugin();
  } else if (to.route.kind == Route::Kind::kPoll) {
    bulkhead = Bulkheads::kPolls;
  }
  if (bulkhead.empty()) return run(std::move(to), std::move(request), std::move(done), {});
  struct Pending {
    Routed to;
    DispatchRequest request;
    std::function<void(Dispatch)> done;
  };
  auto pending =
      std::make_shared<Pending>(Pending{std::move(to), std::move(request), std::move(done)});
  // The call's wait, in its plugin's queue and then for a thread, ends at one time.
  const auto start_by = clock_.now() + queue_wait_;
  bulkheads_.enter(
      bulkhead,
      [this, pending, bulkhead, start_by] {
        run(
            std::move(pending->to), std::move(pending->request),
            [this, bulkhead, done = std::move(pending->done)](Dispatch d) {
              done(std::move(d));
              bulkheads_.leave(bulkhead);  // returned (or not made): its place passes on
            },
            start_by);
      },
      [pending](std::string message) {
        Dispatch d;
        d.not_started = true;
        d.outcome = Outcome::error(std::move(message));
        pending->done(std::move(d));
      });
}

void HttpRouter::run(Routed to, DispatchRequest request, std::function<void(Dispatch)> done,
                     std::optional<Clock::TimePoint> start_by) {
  ++calls_in_flight_;
  const auto start = Steady::now();
  calls_.dispatch(
      std::move(to.generation), std::move(request), timeout_,
      [this, start, done = std::move(done)](Dispatch d) {
        if (!d.plugin.empty()) {
          const double seconds = std::chrono::duration<double>(Steady::now() - start).count();
          PluginStats& s = statsFor(d.plugin);
          ++s.calls;
          ++s.by_phase[phaseIndex(d.outcome.phase)];
          for (std::size_t i = 0; i < kBuckets.size(); ++i) {
            if (seconds <= kBuckets[i]) ++s.buckets[i];
          }
          s.micros += static_cast<std::uint64_t>(seconds * 1e6);
        }
        done(std::move(d));
        if (--calls_in_flight_ == 0 && draining_) {
          std::lock_guard lock(mu_);
          cv_.notify_all();
        }
      },
      std::move(to.route), start_by);
}

int HttpRouter::waitForCalls(Millis grace) {
  // The grace period is a timer on the clock, like every deadline here.
  auto over = std::make_shared<bool>(false);
  const auto timer = clock_.after(grace, [this, over] {
    std::lock_guard lock(mu_);
    *over = true;
    cv_.notify_all();
  });
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return calls_in_flight_ == 0 || *over; });
  lock.unlock();
  clock_.cancel(timer);
  return calls_in_flight_;
}

std::string HttpRouter::readiness() const {
  std::string out = "ready\n";
  for (const auto& c : bulkheads_.counts()) {
    out += c.plugin + ": " + std::to_string(c.in_flight) + "/" + std::to_string(c.limits.calls) +
           " calls in flight, " + std::to_string(c.queued) + "/" + std::to_string(c.limits.queue) +
           " queued, " + std::to_string(c.refused()) + " refused\n";
  }
  return out;
}

bool HttpRouter::authorized(const HttpRequest& req) const {
  if (bearer_.empty()) return true;
  auto it = req.find(http::field::authorization);
  if (it == req.end()) return false;
  const auto given = it->value();
  return given.size() == bearer_.size() &&
         CRYPTO_memcmp(given.data(), bearer_.data(), bearer_.size()) == 0;
}

void HttpRouter::handle(const HttpRequest& req, Respond respond) {
  HttpResponse res = answer(req, respond);
  if (respond) respond(std::move(res));
}

HttpResponse HttpRouter::answer(const HttpRequest& req, Respond& respond) {
  const unsigned v = req.version();
  std::string_view target(req.target().data(), req.target().size());
  target = target.substr(0, target.find('?'));
  if (draining_) return error(http::status::service_unavailable, "the server is shutting down", v);
  if (target == "/healthz") return text(http::status::ok, "ok\n", v);
  if (target == "/readyz") return text(http::status::ok, readiness(), v);
  if (target == "/metrics")
    return text(http::status::ok, metrics(), v, "text/plain; version=0.0.4");
  if (target == "/" || target == "/ui") {
    if (req.method() != http::verb::get)
      return error(http::status::method_not_allowed, "use GET", v);
    // The page holds no data: it reads /api/v1/plugins, with the token its user gives it.
    HttpResponse page =
        text(http::status::ok, std::string(statusPage()), v, "text/html; charset=utf-8");
    page.set("Content-Security-Policy", kStatusPagePolicy);
    page.set(http::field::cache_control, "no-cache");
    page.set("X-Content-Type-Options", "nosniff");
    return page;
  }
  if (!target.starts_with("/api/v1/")) {
    return error(http::status::not_found, "no such path: " + std::string(target), v);
  }
  if (!authorized(req)) {
    return error(http::status::forbidden,
                 "missing or wrong bearer token in the Authorization header", v);
  }
  const std::string_view method = target.substr(8);
  if (method == "template.execute") {
    if (req.method() != http::verb::post)
      return error(http::status::method_not_allowed, "use POST", v);
    execute(req, respond);
    return {};
  }
  if (method == "plugins") {
    if (req.method() != http::verb::get)
      return error(http::status::method_not_allowed, "use GET", v);
    return json(http::status::ok, pluginList(), v);
  }
  if (method.starts_with("plugins/")) {
    if (req.method() != http::verb::post)
      return error(http::status::method_not_allowed, "use POST", v);
    return direct(req, method.substr(8), respond);
  }
  return error(http::status::not_found, "no method '" + std::string(method) + "'", v);
}

void HttpRouter::execute(const HttpRequest& req, Respond& respond) {
  const unsigned v = req.version();
  const auto answer = [&](HttpResponse res) { std::exchange(respond, nullptr)(std::move(res)); };
  // A body sent again whose call succeeded gets the same answer, as it would below, without
  // its body being parsed or its plugin looked up: the reply did not depend on them.
  const ArgoCalls::Key key = ArgoCalls::keyOf(req.body());
  if (auto reply = argo_calls_.kept(key)) {
    return answer(text(http::status::ok, std::move(*reply), v, "application/json"));
  }
  auto request = parseExecuteTemplateArgs(req.body());
  if (!request) return answer(error(http::status::bad_request, request.error().message(), v));
  // Resolved once, here: the answer decides whether it is called, and where.
  Routed to = routed(*request);
  // A template no hosted plugin handles answers {}, so that Argo asks its other sidecars.
  if (!poll_unknown_ && !to.hosted()) {
    return answer(json(http::status::ok, Json::object(), v));
  }
  // The call runs once for all the requests that ask for the same work; each is answered
  // its outcome, or Running at its reply deadline while the call goes on.
  argo_calls_.execute(
      key,
      [this, &request, &to](ArgoCalls::Finish finish) {
        call(std::move(to), std::move(*request), [this, finish = std::move(finish)](Dispatch d) {
          // Not started: refused, never reported Running; Argo's agent sends it again.
          if (d.not_started) return finish({refusalBody(d.outcome.message), false, true});
          if (!d.handled || pollFailed(d)) return finish({"{}", false});
          keepArgoDecodable(d.outcome, d.plugin);
          finish({executeTemplateReply(d.outcome, poll_interval_),
                  d.outcome.phase == Phase::kSucceeded});
        });
      },
      [this, v, respond = std::exchange(respond, nullptr)](std::optional<ArgoCalls::Reply> done) {
        if (done && done->refused) return respond(refused(std::move(done->body), v));
        respond(done ? text(http::status::ok, std::move(done->body), v, "application/json")
                     : stillRunning(v));
      });
}

bool HttpRouter::pollFailed(const Dispatch& d) {
  // A key no hosted plugin has may belong to another sidecar: an error node would stop
  // Argo's agent from asking it.
  if (d.via != Via::kPolled || (d.outcome.phase != Phase::kError && !d.deadline_passed))
    return false;
  // A deadline may pass before the plugin answers: the one being called is the last tried.
  const std::string& plugin = d.plugin.empty() && !d.tried.empty() ? d.tried.back() : d.plugin;
  if (!plugin.empty()) ++statsFor(plugin).poll_errors;
  spdlog::warn("polling plugin {} for a key hosted elsewhere failed, answering {{}}: {}", plugin,
               d.outcome.message);
  return true;
}

HttpResponse HttpRouter::direct(const HttpRequest& req, std::string_view rest, Respond& respond) {
  const auto slash = rest.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == rest.size()) {
    return error(http::status::not_found, "use /api/v1/plugins/<name>/<rpc>", req.version());
  }
  DispatchRequest request;
  request.key = rest.substr(0, slash);
  request.rpc = rest.substr(slash + 1);
  Routed to = routed(request);
  if (!to.hosted()) {
    std::vector<std::string> names;
    for (const auto& e : to.generation->catalog().entries()) names.push_back(e.manifest.name);
    // A refused file named like the key is most likely the plugin meant: say why.
    std::string refused;
    for (const auto& p : to.generation->catalog().problems()) {
      if (toLower(p.file.stem().string()) == toLower(request.key)) refused += "; " + p.oneLine();
    }
    return error(http::status::not_found,
                 "no plugin '" + request.key + "'" + didYouMean(request.key, names) + refused,
                 req.version());
  }
  if (host::holdsNul(req.body())) {
    return error(http::status::bad_request, std::string("the body ") + host::kNulText, req.version());
  }
  if (host::jsonDeeperThan(req.body())) {
    return error(http::status::bad_request, "the body is " + host::tooDeepText(), req.version());
  }
  request.args = req.body().empty() ? Json::object() : Json::parse(req.body(), nullptr, false);
  if (request.args.is_discarded()) {
    return error(http::status::bad_request, "the body is not valid JSON", req.version());
  }
  call(std::move(to), std::move(request),
       [v = req.version(), respond = std::exchange(respond, nullptr)](Dispatch d) {
         if (d.not_started) return respond(refused(refusalBody(d.outcome.message), v));
         Json out = d.outcome.toJson();
         out["plugin"] = d.plugin;
         respond(json(http::status::ok, out, v));
       });
  return {};
}

void HttpRouter::limit(HttpParser& parser) const {
  parser.body_limit(body_limit_);
  parser.header_limit(static_cast<std::uint32_t>(defaults::kHeaderLimit));
}

std::optional<HttpResponse> HttpRouter::readFailed(const boost::system::error_code& ec) const {
  if (ec == http::error::end_of_stream || ec == asio::error::eof ||
      ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
      ec == asio::error::bad_descriptor) {
    return std::nullopt;
  }
  if (ec == http::error::body_limit) {
    return error(http::status::payload_too_large,
                 "the body is larger than " + std::to_string(body_limit_) + " bytes", 11);
  }
  if (ec == http::error::header_limit) {
    return error(http::status::request_header_fields_too_large, "the headers are too large", 11);
  }
  if (draining_) return std::nullopt;
  return error(http::status::bad_request, "malformed HTTP request: " + ec.message(), 11);
}

std::optional<HttpResponse> HttpRouter::readFailed(const boost::system::error_code& ec,
                                                   const HttpParser& parser,
                                                   std::string_view unread) const {
  if (ec != http::error::header_limit) return readFailed(ec);
  // The request line, when the parser took it already, as it was written (method SP target
  // SP version CRLF leave no choice), then what it had not taken.
  std::string again;
  const auto& head = parser.get();
  if (!head.method_string().empty()) {
    again = std::string(head.method_string()) + " " + std::string(head.target()) + " HTTP/" +
            std::to_string(head.version() / 10) + "." + std::to_string(head.version() % 10) +
            "\r\n";
  }
  again.append(unread.substr(0, defaults::kHeaderLimit));
  HttpParser whole;
  limit(whole);
  whole.eager(true);
  boost::system::error_code at_once;
  whole.put(asio::buffer(again), at_once);
  if (at_once && at_once != http::error::need_more && at_once != http::error::header_limit) {
    return readFailed(at_once);
  }
  return readFailed(ec);
}

void HttpRouter::countResponse(const HttpResponse& res) {
  const auto code = res.result_int();
  if (code < responses_.size()) ++responses_[code];
}

Json HttpRouter::pluginList() {
  Json list = Json::array();
  const auto dispatcher = runtime_.current();
  const auto draining = runtime_.draining();
  for (const auto& e : dispatcher->catalog().entries()) {
    const auto state = dispatcher->state(e);
    Json old = Json::array();
    for (const auto& label : draining) {
      if (label.rfind(e.manifest.name + "@", 0) == 0) old.push_back(label);
    }
    PluginStats& s = statsFor(e.label);
    const std::uint64_t calls = s.calls.load();
    Json item = {
        {"name", e.manifest.name},
        {"version", e.manifest.version.text()},
        {"provides", e.manifest.provides},
        {"file", e.file.string()},
        {"state", state.loaded               ? "loaded"
                  : state.load_error.empty() ? "available"
                                             : "error"},
        {"deployer", LiveRuntime::deployerOf(*dispatcher, e)},
        {"calls", calls},
        {"failed", s.phase(Phase::kFailed)},
        {"errors", s.phase(Phase::kError)},
        {"latency_seconds",
         {{"p50", quantile(0.5, s.buckets, calls)}, {"p99", quantile(0.99, s.buckets, calls)}}},
        {"in_flight", 0},
        {"queued", 0},
        {"refused", 0},
        {"draining_versions", std::move(old)}};
    const Bulkheads::Counts share = bulkheads_.countsOf(e.label);
    item["in_flight"] = share.in_flight;
    item["queued"] = share.queued;
    item["refused"] = share.refused();
    item["limits"] = {{"calls", share.limits.calls}, {"queue", share.limits.queue}};
    item["loaded_at"] = state.loaded ? Json(isoTime(state.loaded_at)) : Json(nullptr);
    if (!state.load_error.empty()) item["error"] = state.load_error;
    list.push_back(std::move(item));
  }
  for (const auto& p : dispatcher->catalog().problems()) {
    list.push_back({{"file", p.file.string()},
                    {"state", "error"},
                    {"error", p.message},
                    {"source", p.from_registry ? "registry" : "plugin_dir"}});
  }
  Json conflicts = Json::array();
  for (const auto& c : dispatcher->catalog().conflicts()) conflicts.push_back(c.toJson());
  Json recent = Json::array();
  for (const auto& r : runtime_.recentReloads()) {
    recent.push_back({{"at", isoTime(r.at)},
                      {"file", r.file.string()},
                      {"plugin", r.plugin},
                      {"from", versionOrNull(r.old_version)},
                      {"to", versionOrNull(r.new_version)},
                      {"took_ms", r.took.count()}});
  }
  const BuildInfo& build = buildInfo();
  Json dirs = Json::array();
  for (const auto& d : runtime_.pluginDirs()) dirs.push_back(d.string());
  Json server = {
      {"version", build.version},
      {"commit", build.commit.empty() ? Json(nullptr) : Json(build.commit)},
      {"compiler", build.compiler},
      {"build_type", build.build_type},
      {"listen", listening_.empty() ? Json(nullptr) : Json(listening_)},
      {"plugin_dirs", std::move(dirs)},
      {"started_at", isoTime(started_)},
      {"uptime_seconds",
       std::chrono::duration_cast<std::chrono::seconds>(Steady::now() - started_steady_).count()}};
  return {{"server", std::move(server)},
          {"plugins", std::move(list)},
          {"conflicts", std::move(conflicts)},
          {"reloads", {{"total", runtime_.reloads()}, {"recent", std::move(recent)}}}};
}

std::string HttpRouter::metrics() {
  MetricsText out;
  const BuildInfo& build = buildInfo();
  out.family("plugboard_build_info", "gauge",
             "The running plugboard: its version, git commit, compiler and build type.");
  out.sample("plugboard_build_info",
             {{"version", build.version},
              {"commit", build.commit},
              {"compiler", build.compiler},
              {"build_type", build.build_type}},
             std::uint64_t{1});
  out.family("plugboard_start_time_seconds", "gauge",
             "When serve started, in seconds since the Unix epoch.");
  out.sample("plugboard_start_time_seconds", {},
             std::chrono::duration<double>(started_.time_since_epoch()).count());
  std::lock_guard lock(mu_);
  out.family("plugboard_calls_total", "counter", "Plugin calls, by the phase they ended in.");
  for (const auto& [p, s] : stats_) {
    for (std::size_t i = 0; i < kPhases.size(); ++i) {
      const std::uint64_t n = s->by_phase[i].load();
      if (n == 0 && i > 2) continue;
      out.sample("plugboard_calls_total", {{"plugin", p}, {"phase", phaseName(kPhases[i])}}, n);
    }
  }
  out.family("plugboard_call_errors_total", "counter",
             "Plugin calls that ended in Error (plugboard_calls_total{phase=\"Error\"}, kept "
             "for dashboards made before the phase label).");
  for (const auto& [p, s] : stats_) {
    out.sample("plugboard_call_errors_total", {{"plugin", p}}, s->phase(Phase::kError));
  }
  out.family("plugboard_poll_errors_total", "counter",
             "Polled calls for a key no hosted plugin has that ended in Error or at the deadline "
             "(answered {}).");
  for (const auto& [p, s] : stats_) {
    if (const auto n = s->poll_errors.load()) {
      out.sample("plugboard_poll_errors_total", {{"plugin", p}}, n);
    }
  }
  out.family("plugboard_call_duration_seconds", "histogram", "Plugin call latency.");
  for (const auto& [p, s] : stats_) {
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
      std::ostringstream le;
      le << kBuckets[i];
      out.sample("plugboard_call_duration_seconds_bucket", {{"plugin", p}, {"le", le.str()}},
                 s->buckets[i].load());
    }
    out.sample("plugboard_call_duration_seconds_bucket", {{"plugin", p}, {"le", "+Inf"}},
               s->calls.load());
    out.sample("plugboard_call_duration_seconds_sum", {{"plugin", p}}, s->micros / 1e6);
    out.sample("plugboard_call_duration_seconds_count", {{"plugin", p}}, s->calls.load());
  }
  const auto shares = bulkheads_.counts();
  out.family("plugboard_plugin_calls_in_flight", "gauge",
             "Calls of each plugin in flight now (its bulkhead; \"(polls)\": polls for keys no "
             "plugin has).");
  for (const auto& c : shares) {
    out.sample("plugboard_plugin_calls_in_flight", {{"plugin", c.plugin}},
               static_cast<std::uint64_t>(c.in_flight));
  }
  out.family("plugboard_plugin_calls_queued", "gauge",
             "Calls of each plugin waiting for one of its calls in flight to end.");
  for (const auto& c : shares) {
    out.sample("plugboard_plugin_calls_queued", {{"plugin", c.plugin}},
               static_cast<std::uint64_t>(c.queued));
  }
  out.family("plugboard_plugin_calls_limit", "gauge",
             "Each plugin's bounds: calls in flight (bound=\"in_flight\") and queued "
             "(bound=\"queued\").");
  for (const auto& c : shares) {
    out.sample("plugboard_plugin_calls_limit", {{"plugin", c.plugin}, {"bound", "in_flight"}},
               static_cast<std::uint64_t>(c.limits.calls));
    out.sample("plugboard_plugin_calls_limit", {{"plugin", c.plugin}, {"bound", "queued"}},
               static_cast<std::uint64_t>(c.limits.queue));
  }
  out.family("plugboard_plugin_calls_refused_total", "counter",
             "Calls refused with 503 and not made: at once, the plugin's calls and queue full "
             "(reason=\"full\"), or after waiting in its queue (reason=\"waited\").");
  for (const auto& c : shares) {
    out.sample("plugboard_plugin_calls_refused_total", {{"plugin", c.plugin}, {"reason", "full"}},
               c.refused_full);
    out.sample("plugboard_plugin_calls_refused_total", {{"plugin", c.plugin}, {"reason", "waited"}},
               c.refused_waited);
  }
  const auto current = runtime_.current();
  out.family("plugboard_reloads_total", "counter",
             "Reloads of the plugin directories that applied a change.");
  out.sample("plugboard_reloads_total", {}, static_cast<std::uint64_t>(runtime_.reloads()));
  out.family("plugboard_load_failures_total", "counter",
             "Plugin files that could not be loaded.");
  out.sample("plugboard_load_failures_total", {},
             static_cast<std::uint64_t>(current->loadFailures() +
                                        static_cast<int>(current->catalog().problems().size())));
  out.family("plugboard_http_responses_total", "counter", "HTTP responses by status code.");
  for (std::size_t code = 0; code < responses_.size(); ++code) {
    if (const auto n = responses_[code].load()) {
      out.sample("plugboard_http_responses_total", {{"code", std::to_string(code)}}, n);
    }
  }
  const ArgoCalls::Kept kept = argo_calls_.kept();
  out.family("plugboard_argo_outcomes_kept", "gauge",
             "Finished template.execute replies kept for requests sent again.");
  out.sample("plugboard_argo_outcomes_kept", {}, static_cast<std::uint64_t>(kept.count));
  out.family("plugboard_argo_outcomes_kept_bytes", "gauge", "Bytes of the replies kept.");
  out.sample("plugboard_argo_outcomes_kept_bytes", {}, static_cast<std::uint64_t>(kept.bytes));
  return out.text();
}

}  // namespace plugboard::core

#include "core/serving/http_router.h"

#include <chrono>
#include <ctime>
#include <sstream>
#include <unordered_map>

#include <openssl/crypto.h>
#include <plugboard/host/json_text.h>
#include <spdlog/spdlog.h>
#include <boost/asio/error.hpp>

#include "core/serving/argo.h"
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

struct HttpRouter::PluginStats {
  std::atomic<std::uint64_t> calls{0}, errors{0};
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
      calls_(pool, clock),
      argo_calls_(clock, options.reply_deadline, options.keep_outcomes_for,
                  {options.keep_outcomes, options.keep_outcomes_bytes,
                   options.keep_outcome_max_bytes}) {}

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
  ++calls_in_flight_;
  const auto start = Steady::now();
  calls_.dispatch(std::move(to.generation), std::move(request), timeout_,
                  [this, start, done = std::move(done)](Dispatch d) {
                    if (!d.plugin.empty()) {
                      const double seconds =
                          std::chrono::duration<double>(Steady::now() - start).count();
                      PluginStats& s = statsFor(d.plugin);
                      ++s.calls;
                      if (d.outcome.phase == Phase::kError) ++s.errors;
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
                  std::move(to.route));
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
  if (target == "/readyz") return text(http::status::ok, "ready\n", v);
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
          if (!d.handled || pollFailed(d)) return finish({"{}", false});
          keepArgoDecodable(d.outcome, d.plugin);
          finish({executeTemplateReply(d.outcome, poll_interval_),
                  d.outcome.phase == Phase::kSucceeded});
        });
      },
      [this, v, respond = std::exchange(respond, nullptr)](std::optional<ArgoCalls::Reply> done) {
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
    return error(http::status::not_found, "no plugin '" + request.key + "'", req.version());
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
  call(std::move(to), std::move(request), [v = req.version(), respond = std::exchange(respond, nullptr)](Dispatch d) {
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
        {"errors", s.errors.load()},
        {"latency_seconds",
         {{"p50", quantile(0.5, s.buckets, calls)}, {"p99", quantile(0.99, s.buckets, calls)}}},
        {"draining_versions", std::move(old)}};
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
  return {{"plugins", std::move(list)},
          {"conflicts", std::move(conflicts)},
          {"reloads", {{"total", runtime_.reloads()}, {"recent", std::move(recent)}}}};
}

std::string HttpRouter::metrics() {
  std::ostringstream out;
  std::lock_guard lock(mu_);
  out << "# HELP plugboard_calls_total Plugin calls.\n# TYPE plugboard_calls_total counter\n";
  for (const auto& [p, s] : stats_)
    out << "plugboard_calls_total{plugin=\"" << p << "\"} " << s->calls << "\n";
  out << "# HELP plugboard_call_errors_total Plugin calls that ended in Error.\n"
         "# TYPE plugboard_call_errors_total counter\n";
  for (const auto& [p, s] : stats_) {
    out << "plugboard_call_errors_total{plugin=\"" << p << "\"} " << s->errors << "\n";
  }
  out << "# HELP plugboard_poll_errors_total Polled calls for a key no hosted plugin has that "
         "ended in Error or at the deadline (answered {}).\n"
         "# TYPE plugboard_poll_errors_total counter\n";
  for (const auto& [p, s] : stats_) {
    if (const auto n = s->poll_errors.load())
      out << "plugboard_poll_errors_total{plugin=\"" << p << "\"} " << n << "\n";
  }
  out << "# HELP plugboard_call_duration_seconds Plugin call latency.\n"
         "# TYPE plugboard_call_duration_seconds histogram\n";
  for (const auto& [p, s] : stats_) {
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
      out << "plugboard_call_duration_seconds_bucket{plugin=\"" << p << "\",le=\"" << kBuckets[i]
          << "\"} " << s->buckets[i] << "\n";
    }
    out << "plugboard_call_duration_seconds_bucket{plugin=\"" << p << "\",le=\"+Inf\"} " << s->calls
        << "\n"
        << "plugboard_call_duration_seconds_sum{plugin=\"" << p << "\"} " << s->micros / 1e6 << "\n"
        << "plugboard_call_duration_seconds_count{plugin=\"" << p << "\"} " << s->calls << "\n";
  }
  const auto current = runtime_.current();
  out << "# HELP plugboard_reloads_total Plugin files loaded again after a change.\n"
         "# TYPE plugboard_reloads_total counter\nplugboard_reloads_total "
      << runtime_.reloads() << "\n"
      << "# HELP plugboard_load_failures_total Plugin files that could not be loaded.\n"
         "# TYPE plugboard_load_failures_total counter\nplugboard_load_failures_total "
      << current->loadFailures() + static_cast<int>(current->catalog().problems().size()) << "\n"
      << "# HELP plugboard_http_responses_total HTTP responses by status code.\n"
         "# TYPE plugboard_http_responses_total counter\n";
  for (std::size_t code = 0; code < responses_.size(); ++code) {
    if (const auto n = responses_[code].load()) {
      out << "plugboard_http_responses_total{code=\"" << code << "\"} " << n << "\n";
    }
  }
  const ArgoCalls::Kept kept = argo_calls_.kept();
  out << "# HELP plugboard_argo_outcomes_kept Finished template.execute replies kept for "
         "requests sent again.\n# TYPE plugboard_argo_outcomes_kept gauge\nplugboard_argo_outcomes_kept "
      << kept.count << "\n"
      << "# HELP plugboard_argo_outcomes_kept_bytes Bytes of the replies kept.\n"
         "# TYPE plugboard_argo_outcomes_kept_bytes gauge\nplugboard_argo_outcomes_kept_bytes "
      << kept.bytes << "\n";
  return out.str();
}

}  // namespace plugboard::core

#include "core/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <list>
#include <optional>
#include <map>
#include <unordered_map>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>  // before Boost.Asio 1.74, whose awaitable.hpp misses it under C++20

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <openssl/crypto.h>
#include <spdlog/spdlog.h>

#include "core/argo.h"
#include "core/timed_dispatch.h"

namespace plugboard::core {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
// Concrete executor types: the type-erased defaults cost a visible share of each request.
using Strand = asio::strand<asio::io_context::executor_type>;
using Socket = tcp::socket::rebind_executor<Strand>::other;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;
using Clock = std::chrono::steady_clock;

constexpr std::array<double, 11> kBuckets = {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05,
                                             0.1,    0.5,    1,     5,     30};

struct PluginStats {
  std::atomic<std::uint64_t> calls{0}, errors{0};
  std::array<std::atomic<std::uint64_t>, kBuckets.size()> buckets{};
  std::atomic<std::uint64_t> micros{0};
};

Response json(http::status status, const Json& body, unsigned version) {
  Response res{status, version};
  res.set(http::field::content_type, "application/json");
  res.body() = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  return res;
}

Response text(http::status status, std::string body, unsigned version,
              const char* type = "text/plain; charset=utf-8") {
  Response res{status, version};
  res.set(http::field::content_type, type);
  res.body() = std::move(body);
  return res;
}

std::string isoTime(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&secs));
  return buf;
}

}  // namespace

class Session;

struct HttpServer::Impl {
  Impl(LiveRuntime& r, ServerOptions o) : runtime(r), options(std::move(o)) {}

  LiveRuntime& runtime;
  ServerOptions options;
  const std::uint64_t id = [] {
    static std::atomic<std::uint64_t> servers{0};
    return ++servers;
  }();
  DeadlineWatch deadlines;
  // One event loop per I/O thread, each run by its thread alone: a connection stays on the
  // loop it was given at accept, so no handler hops threads and no lock guards a loop.
  std::vector<std::unique_ptr<asio::io_context>> loops;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> keep_running;
  std::unique_ptr<tcp::acceptor> acceptor;  // on loops[0]
  std::size_t next_loop = 0;
  std::vector<std::thread> threads;  // run `loops`; requests and their plugin calls run on them
  std::atomic<bool> draining{false};
  std::atomic<int> calls_in_flight{0};
  std::array<std::atomic<std::uint64_t>, 600> responses{};  // by status code

  // A call still running after kSlowCall gets a helper thread that runs its loop meanwhile,
  // so the loop's other connections are not held up behind a slow plugin.
  static constexpr Millis kSlowCall{10};
  struct Helper {
    std::atomic<bool> done{false}, finished{false};
    std::thread thread;
  };

  std::mutex mu;  // guards everything below
  std::condition_variable cv;
  std::list<std::weak_ptr<Session>> sessions;
  std::map<std::string, std::unique_ptr<PluginStats>> stats;  // entries are never removed
  std::list<std::unique_ptr<Helper>> helpers;

  PluginStats& statsFor(const std::string& plugin) {
    // Each thread remembers the entries it used, so a call takes no lock after the first.
    thread_local std::unordered_map<std::string, PluginStats*> cache;
    thread_local std::uint64_t cache_owner = 0;
    if (cache_owner != id) {
      cache.clear();
      cache_owner = id;
    }
    if (auto it = cache.find(plugin); it != cache.end()) return *it->second;
    std::lock_guard lock(mu);
    auto& s = stats[plugin];
    if (!s) s = std::make_unique<PluginStats>();
    cache.emplace(plugin, s.get());
    return *s;
  }

  // The loop the calling thread runs (null off the I/O threads).
  static asio::io_context*& currentLoop() {
    thread_local asio::io_context* loop = nullptr;
    return loop;
  }

  void runLoop(asio::io_context& loop) {
    currentLoop() = &loop;
    loop.run();
  }

  // Called on the deadline watcher's thread for a call past kSlowCall.
  Helper* startHelper(asio::io_context& loop) {
    auto helper = std::make_unique<Helper>();
    Helper* h = helper.get();
    h->thread = std::thread([this, &loop, h] {
      currentLoop() = &loop;
      while (!h->done && !loop.stopped()) loop.run_one_for(std::chrono::milliseconds(20));
      h->finished = true;
    });
    std::lock_guard lock(mu);
    helpers.push_back(std::move(helper));
    return h;
  }

  void retireHelper(Helper* h) {
    h->done = true;
    std::lock_guard lock(mu);
    for (auto it = helpers.begin(); it != helpers.end();) {
      if ((*it)->finished) {
        (*it)->thread.join();
        it = helpers.erase(it);
      } else {
        ++it;
      }
    }
  }

  void record(const Dispatch& d, double seconds) {
    if (d.plugin.empty()) return;
    PluginStats& s = statsFor(d.plugin);
    ++s.calls;
    if (d.outcome.phase == Phase::kError) ++s.errors;
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
      if (seconds <= kBuckets[i]) ++s.buckets[i];
    }
    s.micros += static_cast<std::uint64_t>(seconds * 1e6);
  }

  // Runs one dispatch with the configured deadline, counted as in flight.
  Dispatch call(DispatchRequest request) {
    ++calls_in_flight;
    const auto start = Clock::now();
    // The call holds its generation of plugins until it returns: a reload meanwhile
    // sends new calls to the new version while this one finishes on the old. It runs on
    // this connection's thread; the deadline watch cancels it when its time is up, and
    // lends its loop a helper thread if it is slow.
    const std::shared_ptr<Dispatcher> generation = runtime.current();
    struct {
      Impl* server;
      asio::io_context* loop;
      Helper* helper;
    } slow{this, currentLoop(), nullptr};
    std::function<void()> on_slow;  // captures one pointer: no allocation
    if (slow.loop != nullptr) on_slow = [&slow] { slow.helper = slow.server->startHelper(*slow.loop); };
    Dispatch d = deadlines.dispatch(*generation, request, options.default_timeout, std::move(on_slow), kSlowCall);
    if (slow.helper != nullptr) retireHelper(slow.helper);  // on_slow has run, if at all: dispatch returned
    record(d, std::chrono::duration<double>(Clock::now() - start).count());
    if (--calls_in_flight == 0 && draining) {
      std::lock_guard lock(mu);
      cv.notify_all();
    }
    return d;
  }

  bool authorized(const Request& req) const {
    if (options.token.empty()) return true;
    const std::string expected = "Bearer " + options.token;
    auto it = req.find(http::field::authorization);
    if (it == req.end()) return false;
    const auto given = it->value();
    return given.size() == expected.size() &&
           CRYPTO_memcmp(given.data(), expected.data(), expected.size()) == 0;
  }

  Response handle(const Request& req) {
    const unsigned v = req.version();
    std::string_view target(req.target().data(), req.target().size());
    target = target.substr(0, target.find('?'));
    if (draining) return json(http::status::service_unavailable, {{"error", "the server is shutting down"}}, v);
    if (target == "/healthz") return text(http::status::ok, "ok\n", v);
    if (target == "/readyz") return text(http::status::ok, "ready\n", v);
    if (target == "/metrics") return text(http::status::ok, metrics(), v, "text/plain; version=0.0.4");
    if (!target.starts_with("/api/v1/")) return json(http::status::not_found, {{"error", "no such path: " + std::string(target)}}, v);
    if (!authorized(req)) {
      return json(http::status::forbidden, {{"error", "missing or wrong bearer token in the Authorization header"}}, v);
    }
    const std::string_view method = target.substr(8);
    if (method == "template.execute") {
      if (req.method() != http::verb::post) return json(http::status::method_not_allowed, {{"error", "use POST"}}, v);
      return execute(req);
    }
    if (method == "plugins") {
      if (req.method() != http::verb::get) return json(http::status::method_not_allowed, {{"error", "use GET"}}, v);
      return json(http::status::ok, pluginList(), v);
    }
    if (method.starts_with("plugins/")) {
      if (req.method() != http::verb::post) return json(http::status::method_not_allowed, {{"error", "use POST"}}, v);
      return direct(req, std::string(method.substr(8)));
    }
    return json(http::status::not_found, {{"error", "no method '" + std::string(method) + "'"}}, v);
  }

  Response execute(const Request& req) {
    auto request = parseExecuteTemplateArgs(req.body());
    if (!request) return json(http::status::bad_request, {{"error", request.error().message()}}, req.version());
    Dispatch d = call(std::move(*request));
    // A template no hosted plugin handles answers {}, so that Argo polls its other sidecars.
    if (!d.handled) return json(http::status::ok, Json::object(), req.version());
    return text(http::status::ok, executeTemplateReply(d.outcome, options.poll_interval), req.version(),
                "application/json");
  }

  Response direct(const Request& req, const std::string& rest) {
    const auto slash = rest.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == rest.size()) {
      return json(http::status::not_found, {{"error", "use /api/v1/plugins/<name>/<rpc>"}}, req.version());
    }
    DispatchRequest request;
    request.key = rest.substr(0, slash);
    request.rpc = rest.substr(slash + 1);
    if (runtime.current()->resolve(request.key) == nullptr) {
      return json(http::status::not_found, {{"error", "no plugin '" + request.key + "'"}}, req.version());
    }
    request.args = req.body().empty() ? Json::object() : Json::parse(req.body(), nullptr, false);
    if (request.args.is_discarded()) {
      return json(http::status::bad_request, {{"error", "the body is not valid JSON"}}, req.version());
    }
    Dispatch d = call(std::move(request));
    Json out = d.outcome.toJson();
    out["plugin"] = d.plugin;
    return json(http::status::ok, out, req.version());
  }

  Json pluginList() {
    Json list = Json::array();
    const auto dispatcher = runtime.current();
    const auto draining = runtime.draining();
    for (const auto& e : dispatcher->catalog().entries()) {
      const auto state = dispatcher->state(e);
      Json old = Json::array();
      for (const auto& label : draining) {
        if (label.rfind(e.manifest.name + "@", 0) == 0) old.push_back(label);
      }
      PluginStats& s = statsFor(e.label);
      Json item = {{"name", e.manifest.name},
                   {"version", e.manifest.version.text()},
                   {"provides", e.manifest.provides},
                   {"file", e.file.string()},
                   {"state", state.loaded ? "loaded" : state.load_error.empty() ? "available" : "error"},
                   {"calls", s.calls.load()},
                   {"errors", s.errors.load()},
                   {"draining_versions", std::move(old)}};
      item["loaded_at"] = state.loaded ? Json(isoTime(state.loaded_at)) : Json(nullptr);
      if (!state.load_error.empty()) item["error"] = state.load_error;
      list.push_back(std::move(item));
    }
    for (const auto& p : dispatcher->catalog().problems()) {
      list.push_back({{"file", p.file.string()}, {"state", "error"}, {"error", p.message}});
    }
    return {{"plugins", std::move(list)}};
  }

  std::string metrics() {
    std::ostringstream out;
    std::lock_guard lock(mu);
    out << "# HELP plugboard_calls_total Plugin calls.\n# TYPE plugboard_calls_total counter\n";
    for (const auto& [p, s] : stats) out << "plugboard_calls_total{plugin=\"" << p << "\"} " << s->calls << "\n";
    out << "# HELP plugboard_call_errors_total Plugin calls that ended in Error.\n"
           "# TYPE plugboard_call_errors_total counter\n";
    for (const auto& [p, s] : stats) out << "plugboard_call_errors_total{plugin=\"" << p << "\"} " << s->errors << "\n";
    out << "# HELP plugboard_call_duration_seconds Plugin call latency.\n"
           "# TYPE plugboard_call_duration_seconds histogram\n";
    for (const auto& [p, s] : stats) {
      for (std::size_t i = 0; i < kBuckets.size(); ++i) {
        out << "plugboard_call_duration_seconds_bucket{plugin=\"" << p << "\",le=\"" << kBuckets[i]
            << "\"} " << s->buckets[i] << "\n";
      }
      out << "plugboard_call_duration_seconds_bucket{plugin=\"" << p << "\",le=\"+Inf\"} " << s->calls << "\n"
          << "plugboard_call_duration_seconds_sum{plugin=\"" << p << "\"} " << s->micros / 1e6 << "\n"
          << "plugboard_call_duration_seconds_count{plugin=\"" << p << "\"} " << s->calls << "\n";
    }
    out << "# HELP plugboard_reloads_total Plugin files loaded again after a change.\n"
           "# TYPE plugboard_reloads_total counter\nplugboard_reloads_total " << runtime.reloads() << "\n"
        << "# HELP plugboard_load_failures_total Plugin files that could not be loaded.\n"
           "# TYPE plugboard_load_failures_total counter\nplugboard_load_failures_total "
        << runtime.current()->loadFailures() + static_cast<int>(runtime.current()->catalog().problems().size())
        << "\n"
        << "# HELP plugboard_http_responses_total HTTP responses by status code.\n"
           "# TYPE plugboard_http_responses_total counter\n";
    for (std::size_t code = 0; code < responses.size(); ++code) {
      if (const auto n = responses[code].load()) out << "plugboard_http_responses_total{code=\"" << code << "\"} " << n << "\n";
    }
    return out.str();
  }

  void countResponse(const Response& res) {
    const auto code = res.result_int();
    if (code < responses.size()) ++responses[code];
  }

  void accept();
};

// One connection: reads a request, runs it (plugin call included) on the I/O thread that
// completed the read, writes the answer, and reads the next one while kept alive.
//
// Idle connections: a timer fires every idle timeout and closes the connection if it has
// been waiting for a request for that long. It is not reset for each request (that would
// cost a timer update, often a system call, per request); it is re-armed when it fires.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Socket socket, HttpServer::Impl& server)
      : socket_(std::move(socket)), idle_timer_(socket_.get_executor()), server_(server) {}

  void start() {
    armIdleTimer(server_.options.idle_timeout);
    read();
  }

  // Ends an idle session at shutdown; one in a call finishes it first.
  void close() {
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
      beast::error_code ec;
      self->socket_.shutdown(tcp::socket::shutdown_both, ec);
    });
  }

 private:
  void armIdleTimer(Clock::duration after) {
    idle_timer_.expires_after(after);
    idle_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec) self->onIdleTimer();
    });
  }

  void onIdleTimer() {
    if (!socket_.is_open()) return;
    const auto idle = server_.options.idle_timeout;
    const auto waited = Clock::now() - waiting_since_;
    if (!waiting_ || waited < idle) return armIdleTimer(waiting_ ? idle - waited : Clock::duration(idle));
    spdlog::debug("closed a connection idle for {}", formatElapsed(idle));
    finish();
  }

  void read() {
    parser_.emplace();
    parser_->body_limit(server_.options.body_limit);
    parser_->header_limit(16 * 1024);
    waiting_ = true;
    waiting_since_ = Clock::now();
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->onRead(ec); });
  }

  void onRead(beast::error_code ec) {
    waiting_ = false;  // a call keeps its own deadline
    if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::operation_aborted ||
        ec == asio::error::connection_reset || ec == asio::error::bad_descriptor) {
      return finish();
    }
    if (ec == http::error::body_limit) {
      return send(json(http::status::payload_too_large,
                       {{"error", "the body is larger than " + std::to_string(server_.options.body_limit) + " bytes"}},
                       11),
                  false);
    }
    if (ec == http::error::header_limit) {
      return send(json(http::status::request_header_fields_too_large, {{"error", "the headers are too large"}}, 11),
                  false);
    }
    if (ec) {
      if (server_.draining) return finish();
      return send(json(http::status::bad_request, {{"error", "malformed HTTP request: " + ec.message()}}, 11), false);
    }
    Request req = parser_->release();
    const bool keep_alive = req.keep_alive() && !server_.draining;
    Response res = server_.handle(req);
    send(std::move(res), keep_alive && !server_.draining);
  }

  void send(Response res, bool keep_alive) {
    res.set(http::field::server, "plugboard");
    res.keep_alive(keep_alive);
    res.prepare_payload();
    server_.countResponse(res);
    response_ = std::move(res);  // kept here until written
    http::async_write(socket_, response_,
                      [self = shared_from_this(), keep_alive](beast::error_code ec, std::size_t) {
                        if (ec || !keep_alive) return self->finish();
                        self->read();
                      });
  }

  void finish() {
    beast::error_code ec;
    idle_timer_.cancel();
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }

  Socket socket_;
  asio::steady_timer idle_timer_;
  bool waiting_ = false;  // for the next request
  Clock::time_point waiting_since_;
  Response response_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpServer::Impl& server_;
};

void HttpServer::Impl::accept() {
  asio::io_context& loop = *loops[next_loop++ % loops.size()];
  acceptor->async_accept(asio::make_strand(loop.get_executor()), [this](beast::error_code ec, Socket socket) {
    if (ec) {
      if (!draining && acceptor->is_open()) {
        spdlog::warn("accept failed: {}", ec.message());
        accept();
      }
      return;
    }
    socket.set_option(tcp::no_delay(true), ec);
    auto session = std::make_shared<Session>(std::move(socket), *this);
    {
      std::lock_guard lock(mu);
      std::erase_if(sessions, [](const std::weak_ptr<Session>& w) { return w.expired(); });
      sessions.push_back(session);
    }
    session->start();
    accept();
  });
}

HttpServer::HttpServer(LiveRuntime& runtime, ServerOptions options)
    : impl_(std::make_unique<Impl>(runtime, std::move(options))) {}

HttpServer::~HttpServer() {
  if (!impl_->threads.empty()) shutdown();
}

Expected<std::string> HttpServer::start() {
  const std::string& listen = impl_->options.listen;
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) return Error("listen address '" + listen + "' is not host:port");
  beast::error_code ec;
  const auto address = asio::ip::make_address(listen.substr(0, colon), ec);
  if (ec) return Error("listen address '" + listen + "': " + ec.message());
  unsigned long port = 0;
  try {
    port = std::stoul(listen.substr(colon + 1));
  } catch (const std::exception&) {
    port = 65536;
  }
  if (port > 65535) return Error("listen address '" + listen + "': bad port");
  const int n = impl_->options.threads > 0 ? impl_->options.threads
                                           : std::max(4, 2 * static_cast<int>(std::thread::hardware_concurrency()));
  for (int i = 0; i < n; ++i) {
    // Not concurrency hint 1: a helper thread may run the loop too, and with that hint
    // Asio does not wake a waiting thread when the other leaves the reactor to it.
    impl_->loops.push_back(std::make_unique<asio::io_context>());
    impl_->keep_running.push_back(asio::make_work_guard(*impl_->loops.back()));
  }
  impl_->acceptor = std::make_unique<tcp::acceptor>(*impl_->loops[0]);
  auto& acceptor = *impl_->acceptor;
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Error("cannot listen on " + listen + ": " + ec.message());
  const auto bound = acceptor.local_endpoint();
  impl_->accept();
  for (int i = 0; i < n; ++i) impl_->threads.emplace_back([this, i] { impl_->runLoop(*impl_->loops[i]); });
  return bound.address().to_string() + ":" + std::to_string(bound.port());
}

int HttpServer::shutdown() {
  Impl& s = *impl_;
  s.draining = true;
  asio::post(*s.loops[0], [&s] {
    beast::error_code ec;
    s.acceptor->close(ec);
  });
  int still_running;
  std::vector<std::shared_ptr<Session>> open;
  {
    std::unique_lock lock(s.mu);
    s.cv.wait_for(lock, s.options.grace_period, [&] { return s.calls_in_flight == 0; });
    still_running = s.calls_in_flight;
    for (auto& w : s.sessions) {
      if (auto session = w.lock()) open.push_back(std::move(session));
    }
  }
  for (auto& session : open) session->close();  // idle ones; the others close after answering
  open.clear();
  // Let the last answers go out, then stop the I/O threads.
  for (int i = 0; i < 50; ++i) {
    bool any = false;
    {
      std::lock_guard lock(s.mu);
      for (auto& w : s.sessions) any = any || !w.expired();
    }
    if (!any || still_running > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (auto& loop : s.loops) loop->stop();
  {
    // A helper leaves its stopped loop at once, unless it is in a call that ignored its
    // deadline: that one is left running, with its Helper, as the I/O threads are.
    std::lock_guard lock(s.mu);
    for (auto& h : s.helpers) h->done = true;
    for (int i = 0; i < 20 && !std::all_of(s.helpers.begin(), s.helpers.end(), [](auto& h) { return h->finished.load(); }); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (auto& h : s.helpers) {
      if (h->finished) {
        h->thread.join();
      } else {
        h->thread.detach();
        h.release();
      }
    }
    s.helpers.clear();
  }
  for (auto& t : s.threads) {
    if (still_running > 0) {
      t.detach();  // a call that ignored its deadline still runs on it
    } else {
      t.join();
    }
  }
  s.threads.clear();
  return still_running;
}

Expected<std::string> readTokenFile(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return Error(file.string() + ": cannot read the token file");
  std::stringstream buf;
  buf << in.rdbuf();
  std::string token = buf.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.empty()) return Error(file.string() + ": the token file is empty");
  return token;
}

}  // namespace plugboard::core

#include "core/serving/http_server.h"

#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <list>
#include <mutex>
#include <optional>
#include <sstream>
#include <utility>  // before Boost.Asio 1.74, whose awaitable.hpp misses it under C++20

#include <spdlog/spdlog.h>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "core/base/read_file.h"
#include "core/serving/accept_limits.h"
#include "core/serving/http_router.h"

namespace plugboard::core {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
// Concrete executor types: the type-erased defaults cost a visible share of each request.
using Strand = asio::strand<asio::io_context::executor_type>;
using Socket = tcp::socket::rebind_executor<Strand>::other;
using Steady = std::chrono::steady_clock;

// One connection: reads a request, hands it to the router, writes the answer when it
// comes, and reads the next one while kept alive. Everything on the socket runs on the
// connection's strand, on its event loop's I/O thread; the router answers at once, or
// later from the WorkPool's thread (a plugin call) or the clock's (a reply deadline), and
// that answer is posted back to the strand. While a request waits for its answer the
// session holds itself (`in_call_`), so the loop goes on serving its other connections.
//
// Idle connections: a timer fires every idle timeout and closes the connection if it has
// been waiting for a request for that long. It is not reset for each request (that would
// cost a timer update, often a system call, per request); it is re-armed when it fires.
class Session : public std::enable_shared_from_this<Session> {
 public:
  // `open` counts the sessions that exist; this one from now until it is destroyed.
  Session(Socket socket, HttpRouter& router, Millis idle_timeout, std::atomic<std::size_t>& open)
      : socket_(std::move(socket)),
        idle_timer_(socket_.get_executor()),
        router_(router),
        idle_timeout_(idle_timeout),
        open_(open) {
    open_.fetch_add(1, std::memory_order_relaxed);
  }
  ~Session() { open_.fetch_sub(1, std::memory_order_relaxed); }

  void start() {
    armIdleTimer(idle_timeout_);
    read();
  }

  // Ends an idle session at shutdown; one waiting for its answer sends it first (with
  // Connection: close, as the router is draining) and ends then.
  void close() {
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
      if (self->in_call_ != nullptr) return;
      beast::error_code ec;
      self->socket_.shutdown(tcp::socket::shutdown_both, ec);
    });
  }

 private:
  enum : int { kInHandle, kAnsweredInHandle, kHandleReturned };

  void armIdleTimer(Steady::duration after) {
    idle_timer_.expires_after(after);
    idle_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec) self->onIdleTimer();
    });
  }

  void onIdleTimer() {
    if (!socket_.is_open()) return;
    const auto waited = Steady::now() - waiting_since_;
    if (!waiting_ || waited < idle_timeout_) {
      return armIdleTimer(waiting_ ? idle_timeout_ - waited : Steady::duration(idle_timeout_));
    }
    spdlog::debug("closed a connection idle for {}", formatElapsed(idle_timeout_));
    finish();
  }

  void read() {
    parser_.emplace();
    router_.limit(*parser_);
    waiting_ = true;
    waiting_since_ = Steady::now();
    http::async_read(
        socket_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->onRead(ec); });
  }

  void onRead(beast::error_code ec) {
    waiting_ = false;  // a call keeps its own deadline
    if (ec) {
      const auto unread = buffer_.data();
      if (auto answer = router_.readFailed(
              ec, *parser_, {static_cast<const char*>(unread.data()), unread.size()})) {
        return send(std::move(*answer), false);
      }
      return finish();
    }
    const HttpRequest req = parser_->release();
    keep_alive_ = req.keep_alive();
    in_call_ = shared_from_this();
    state_.store(kInHandle, std::memory_order_relaxed);
    router_.handle(req, [this](HttpResponse res) { onAnswer(std::move(res)); });
    int expected = kInHandle;
    if (!state_.compare_exchange_strong(expected, kHandleReturned)) answered();  // at once
  }

  // From any thread, once per request.
  void onAnswer(HttpResponse res) {
    response_ = std::move(res);
    int expected = kInHandle;
    if (state_.compare_exchange_strong(expected, kAnsweredInHandle)) return;  // onRead sends it
    asio::post(socket_.get_executor(), [this] { answered(); });
  }

  // On the strand, with the answer in response_.
  void answered() {
    const auto self = std::move(in_call_);
    send(std::move(response_), keep_alive_ && !router_.draining());
  }

  void prepare(HttpResponse& res, bool keep_alive) {
    res.set(http::field::server, "plugboard");
    res.keep_alive(keep_alive);
    res.prepare_payload();
    router_.countResponse(res);
  }
  void send(HttpResponse res, bool keep_alive) {
    prepare(res, keep_alive);
    response_ = std::move(res);  // kept here until written
    // The head is written here rather than by Beast's serializer, which cost a visible
    // share of each request; the body has its length set by prepare().
    const auto append = [this](beast::string_view s) { head_.append(s.data(), s.size()); };
    head_.clear();
    append(response_.version() == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
    append(std::to_string(response_.result_int()));
    append(" ");
    append(response_.reason());
    append("\r\n");
    for (const auto& field : response_) {
      append(field.name_string());
      append(": ");
      append(field.value());
      append("\r\n");
    }
    append("\r\n");
    const std::array<asio::const_buffer, 2> buffers{asio::buffer(head_),
                                                    asio::buffer(response_.body())};
    asio::async_write(socket_, buffers,
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
  HttpRouter& router_;
  const Millis idle_timeout_;
  std::atomic<std::size_t>& open_;
  std::shared_ptr<Session> in_call_;  // this, while a request waits for its answer
  std::atomic<int> state_{kHandleReturned};  // orders an answer given within handle()
  bool keep_alive_ = false;           // what the request asked for
  bool waiting_ = false;              // for the next request
  Steady::time_point waiting_since_;
  HttpResponse response_;
  std::string head_;  // response_'s status line and fields, as sent
  beast::flat_buffer buffer_;
  std::optional<HttpParser> parser_;
};

// A connection beyond the limit: answered 503 with Connection: close at once, without
// reading its request, then read and dropped from until the peer closes, for a second at
// most, so that closing with its request unread does not reset the answer away. Only
// kMaxLingering refusals linger so at once (`lingering` counts them); beyond them a
// refusal is closed once its answer is written, so that a flood of connections does not
// hold descriptors.
class Refusal : public std::enable_shared_from_this<Refusal> {
 public:
  static constexpr std::size_t kMaxLingering = 64;

  Refusal(Socket socket, std::shared_ptr<const std::string> answer,
          std::atomic<std::size_t>& lingering)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        answer_(std::move(answer)),
        lingering_(lingering),
        linger_(lingering.fetch_add(1, std::memory_order_relaxed) < kMaxLingering) {}
  ~Refusal() { lingering_.fetch_sub(1, std::memory_order_relaxed); }

  void start() {
    asio::async_write(socket_, asio::buffer(*answer_),
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        if (ec) return self->close();
                        self->socket_.shutdown(tcp::socket::shutdown_send, ec);
                        if (!self->linger_) return self->close();
                        self->timer_.expires_after(std::chrono::seconds(1));
                        self->timer_.async_wait([self](beast::error_code e) {
                          if (!e) self->close();
                        });
                        self->drain();
                      });
  }

 private:
  void drain() {
    socket_.async_read_some(asio::buffer(scratch_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->close();
                              self->drain();
                            });
  }

  void close() {
    beast::error_code ec;
    timer_.cancel();
    socket_.close(ec);
  }

  Socket socket_;
  asio::steady_timer timer_;
  std::shared_ptr<const std::string> answer_;
  std::atomic<std::size_t>& lingering_;
  const bool linger_;
  std::array<char, 512> scratch_;
};

// The cores this process may run on (its affinity mask), at least 1: as many event loops as
// cores, since more only take turns on them and wake more often for fewer events each.
int usableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
}

}  // namespace

class HttpServer::Impl {
 public:
  Impl(LiveRuntime& runtime, ServerOptions o)
      : options(std::move(o)),
        pool(std::make_unique<WorkPool>(options.call_threads, std::chrono::microseconds(0),
                                        defaults::kLowerCallsAfter)),
        router(runtime, options, *pool, pool->clock()) {}
  // The pool first: its tasks end (answering through the router and the loops) before
  // what they use goes.
  ~Impl() { pool.reset(); }

  void accept();
  // After accept() failed: accepts again at once or after a pause (accept_limits.h).
  void acceptFailed(const beast::error_code& ec);
  // Answers a connection beyond the limit 503 and closes it.
  void refuse(Socket socket);

  const ServerOptions options;
  std::unique_ptr<WorkPool> pool;  // the plugin calls; its clock keeps every deadline
  HttpRouter router;
  std::size_t max_connections = 0;               // set by start()
  std::atomic<std::size_t> open_connections{0};  // sessions that exist
  std::atomic<std::size_t> refusals{0};          // refusals that exist
  // Pauses after failed accepts, and their log.
  AcceptBackoff backoff;
  LogEvery refused{AcceptBackoff::kLogEvery};
  HttpResponse refusal;  // the 503 for connections beyond the limit, counted in /metrics
  std::shared_ptr<const std::string> refusal_text;  // as sent
  // One event loop per I/O thread, each run by its thread alone: a connection stays on the
  // loop it was given at accept, so no handler hops threads and no lock guards a loop.
  std::vector<std::unique_ptr<asio::io_context>> loops;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> keep_running;
  std::unique_ptr<tcp::acceptor> acceptor;           // on loops[0]
  std::unique_ptr<asio::steady_timer> accept_pause;  // on loops[0]: waits out a pause
  std::size_t next_loop = 0;
  std::unique_ptr<WorkPool> io;  // one thread per loop, running it: I/O and nothing else

  std::mutex mu;  // guards sessions
  std::list<std::weak_ptr<Session>> sessions;
};

void HttpServer::Impl::accept() {
  asio::io_context& loop = *loops[next_loop++ % loops.size()];
  acceptor->async_accept(
      asio::make_strand(loop.get_executor()), [this](beast::error_code ec, Socket socket) {
        if (ec) return acceptFailed(ec);
        if (auto line = backoff.accepted(Steady::now())) spdlog::warn("{}", *line);
        if (open_connections.load(std::memory_order_relaxed) >= max_connections) {
          refuse(std::move(socket));
          return accept();
        }
        socket.set_option(tcp::no_delay(true), ec);
        auto session = std::make_shared<Session>(std::move(socket), router, options.idle_timeout,
                                                 open_connections);
        {
          std::lock_guard lock(mu);
          std::erase_if(sessions, [](const std::weak_ptr<Session>& w) { return w.expired(); });
          sessions.push_back(session);
        }
        session->start();
        accept();
      });
}

void HttpServer::Impl::acceptFailed(const beast::error_code& ec) {
  if (router.draining() || !acceptor->is_open()) return;
  // An error outside the system's category is not an errno: pause for it as for any
  // error the next accept may meet again.
  const int error = ec.category() == boost::system::system_category() ? ec.value() : -1;
  std::string message = ec.message();
  if (error == EMFILE) {
    message += " (the limit is " + std::to_string(descriptorLimit().soft) + ")";
  }
  const auto step = backoff.failed(error, message, Steady::now());
  if (step.log) spdlog::warn("{}", *step.log);
  if (step.pause == Millis{0}) return accept();
  accept_pause->expires_after(step.pause);
  accept_pause->async_wait([this](beast::error_code e) {
    if (!e && !router.draining() && acceptor->is_open()) accept();
  });
}

void HttpServer::Impl::refuse(Socket socket) {
  router.countResponse(refusal);
  if (auto n = refused.count(Steady::now())) {
    spdlog::warn("refused {} connection(s) with 503: {} connections are open, the limit", *n,
                 max_connections);
  }
  std::make_shared<Refusal>(std::move(socket), refusal_text, refusals)->start();
}

HttpServer::HttpServer(LiveRuntime& runtime, ServerOptions options)
    : impl_(std::make_unique<Impl>(runtime, std::move(options))) {}

AlarmClock& HttpServer::clock() { return impl_->pool->clock(); }

HttpServer::~HttpServer() {
  if (impl_->io != nullptr) shutdown();
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
  const int n = impl_->options.threads > 0 ? impl_->options.threads : usableCores();
  for (int i = 0; i < n; ++i) {
    // Concurrency hint 1: each loop is run by its one thread; answers from the pool come
    // in through post(), which locks anyway.
    impl_->loops.push_back(std::make_unique<asio::io_context>(1));
    impl_->keep_running.push_back(asio::make_work_guard(*impl_->loops.back()));
  }
  impl_->acceptor = std::make_unique<tcp::acceptor>(*impl_->loops[0]);
  impl_->accept_pause = std::make_unique<asio::steady_timer>(*impl_->loops[0]);
  impl_->max_connections = connectionLimit(impl_->options.max_connections, descriptorLimit());
  HttpResponse& refusal = impl_->refusal;
  refusal = HttpResponse(http::status::service_unavailable, 11);
  refusal.set(http::field::server, "plugboard");
  refusal.set(http::field::content_type, "application/json");
  refusal.set(http::field::retry_after, "1");
  refusal.body() = "{\"error\":\"the server has " + std::to_string(impl_->max_connections) +
                   " connections open, its limit; try again later\"}";
  refusal.keep_alive(false);
  refusal.prepare_payload();
  std::ostringstream text;
  text << refusal;
  impl_->refusal_text = std::make_shared<const std::string>(text.str());
  auto& acceptor = *impl_->acceptor;
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Error("cannot listen on " + listen + ": " + ec.message());
  const auto bound = acceptor.local_endpoint();
  impl_->router.setListening(bound.address().to_string() + ":" + std::to_string(bound.port()));
  impl_->accept();
  impl_->io = std::make_unique<WorkPool>(n);
  for (auto& loop : impl_->loops) impl_->io->post([l = loop.get()] { l->run(); });
  return bound.address().to_string() + ":" + std::to_string(bound.port());
}

void HttpServer::drain() {
  Impl& s = *impl_;
  if (s.router.draining()) return;
  s.router.drain();
  asio::post(*s.loops[0], [&s] {
    beast::error_code ec;
    s.acceptor->close(ec);
    s.accept_pause->cancel();
  });
}

int HttpServer::shutdown() {
  Impl& s = *impl_;
  drain();
  const int still_running = s.router.waitForCalls(s.options.grace_period);
  std::vector<std::shared_ptr<Session>> open;
  {
    std::lock_guard lock(s.mu);
    for (auto& w : s.sessions) {
      if (auto session = w.lock()) open.push_back(std::move(session));
    }
  }
  for (auto& session : open) session->close();  // idle ones; the others close after answering
  open.clear();
  // The loops end when their last answers are written and their connections closed; one
  // held up (a peer that does not read, a call that ignored its deadline) is stopped after
  // kLastWrites, a timer on the pool's clock.
  constexpr auto kLastWrites = std::chrono::milliseconds(500);
  s.keep_running.clear();
  const auto stop = s.pool->clock().after(kLastWrites, [&s] {
    for (auto& loop : s.loops) loop->stop();
  });
  s.io.reset();                  // waits for the loops to return
  s.pool->clock().cancel(stop);  // or it fired: the loops are stopped either way
  // The calls still running are not waited for: their threads end when they return.
  for (int i = 0; i < still_running; ++i) s.pool->abandon();
  return still_running;
}

Expected<std::string> readTokenFile(const std::filesystem::path& file) {
  auto token = readTextFile(file, "token file", defaults::kMaxTokenBytes);
  if (!token) return token.error();
  while (!token->empty() && std::isspace(static_cast<unsigned char>(token->back()))) {
    token->pop_back();
  }
  if (token->empty()) return Error(file.string() + ": the token file is empty");
  return token;
}

}  // namespace plugboard::core

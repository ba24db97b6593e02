#include "deployers/argo/http_client.h"

#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace plugboard::argo_deployer {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {
constexpr std::size_t kBodyLimit = 16 << 20;
constexpr std::size_t kEarlyCancelsKept = 64;
}  // namespace

struct HttpClient::Connection {
  asio::io_context io;
  tcp::socket socket{io};
  beast::flat_buffer buffer;
  std::atomic<int> fd{-1};  // the socket's, once open: what a cancel shuts down
  bool reused = false;
  bool shut = false;  // a cancel shut it down: never used again (guarded by mu_)
};

HttpClient::HttpClient(HttpTarget target) : target_(std::move(target)) {}
HttpClient::~HttpClient() = default;

void HttpClient::begin(std::uint64_t call) {
  std::lock_guard lock(mu_);
  calls_[call];  // cancelled already when a cancel came first
  early_.erase(call);
}

void HttpClient::end(std::uint64_t call) {
  std::lock_guard lock(mu_);
  calls_.erase(call);
}

void HttpClient::cancel(std::uint64_t call) {
  std::lock_guard lock(mu_);
  auto it = calls_.find(call);
  if (it == calls_.end()) {
    // The runtime may cancel a call before it reached begin(), or after it ended: kept for
    // a begin() that may follow, the oldest few forgotten so that late cancels cannot pile up.
    it = calls_.emplace(call, CallState{}).first;
    early_.insert(call);
    while (early_.size() > kEarlyCancelsKept) {
      calls_.erase(*early_.begin());
      early_.erase(early_.begin());
    }
  }
  it->second.cancelled = true;
  if (Connection* c = it->second.in_flight; c != nullptr) {
    // The request's thread is blocked in a read or write of this socket, or about to be:
    // shutting it down ends that at once. The socket is closed by that thread, after it
    // let go of the connection under this lock, so the descriptor is still this socket's.
    if (const int fd = c->fd.load(); fd >= 0) ::shutdown(fd, SHUT_RDWR);
    c->shut = true;
  }
  cv_.notify_all();
}

bool HttpClient::cancelled(std::uint64_t call) {
  std::lock_guard lock(mu_);
  auto it = calls_.find(call);
  return it != calls_.end() && it->second.cancelled;
}

bool HttpClient::waitCancelled(std::uint64_t call, std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, d, [&] {
    auto it = calls_.find(call);
    return it != calls_.end() && it->second.cancelled;
  });
}

host::Status HttpClient::connect(std::uint64_t call, Connection& c) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(target_.address, ec);
  if (ec) return host::Error("bad address '" + target_.address + "'");
  const tcp::endpoint endpoint(address, target_.port);
  if (target_.make_socket) {
    auto fd = target_.make_socket();
    if (!fd) return fd.error();
    c.socket.assign(endpoint.protocol(), *fd, ec);
  } else {
    c.socket.open(endpoint.protocol(), ec);
  }
  if (ec) return host::Error("socket: " + ec.message());
  c.fd = c.socket.native_handle();
  // After the descriptor is published: a cancel from now on shuts it down, one before is seen here.
  if (cancelled(call)) return host::Error("cancelled", host::Error::Code::kCancelled);
  // Without blocking, so that a cancel is seen while a far host does not answer.
  const int fd = c.socket.native_handle();
  c.socket.native_non_blocking(true, ec);
  if (::connect(fd, endpoint.data(), static_cast<socklen_t>(endpoint.size())) != 0) {
    if (errno != EINPROGRESS) return host::Error(std::strerror(errno));
    for (;;) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 50) > 0) break;
      if (cancelled(call)) return host::Error("cancelled", host::Error::Code::kCancelled);
    }
    int error = 0;
    socklen_t len = sizeof error;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
    if (error != 0) return host::Error(std::strerror(error));
  }
  c.socket.native_non_blocking(false, ec);
  c.socket.set_option(tcp::no_delay(true), ec);
  // A cancel while it connected could not shut it down yet.
  if (cancelled(call)) return host::Error("cancelled", host::Error::Code::kCancelled);
  return host::Status::Ok();
}

host::Expected<HttpResponse> HttpClient::exchange(
    std::uint64_t call, Connection& c, const std::string& path, const std::string& body,
    const std::vector<std::pair<std::string, std::string>>& headers, bool& answered, bool& keep) {
  answered = false;
  keep = false;
  if (!c.socket.is_open()) {
    if (host::Status st = connect(call, c); !st) return st.error();
  }
  http::request<http::string_body> request{http::verb::post, path, 11};
  request.set(http::field::host, target_.host_header);
  // No User-Agent: Argo's sidecars do not look at it, and Python's http.server, which most
  // of them are written with, spends about 4 µs a call parsing each header line.
  for (const auto& [name, value] : headers) request.set(name, value);
  request.body() = body;
  request.keep_alive(true);
  request.prepare_payload();
  boost::system::error_code ec;
  http::write(c.socket, request, ec);
  http::response_parser<http::string_body> parser;
  parser.body_limit(kBodyLimit);
  if (!ec) {
    http::read(c.socket, c.buffer, parser, ec);
    answered = parser.got_some();
  }
  if (ec) {
    if (ec == http::error::body_limit) return host::Error("the answer is larger than 16 MiB");
    return host::Error(ec.message());
  }
  auto& response = parser.get();
  keep = response.keep_alive();
  return HttpResponse{response.result_int(), std::string(response.reason()),
                      std::move(response.body())};
}

host::Expected<HttpResponse> HttpClient::post(
    std::uint64_t call, const std::string& path, const std::string& body,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<Connection> c;
    {
      std::lock_guard lock(mu_);
      auto& state = calls_[call];
      if (state.cancelled) return host::Error("cancelled", host::Error::Code::kCancelled);
      if (!idle_.empty()) {
        c = std::move(idle_.back());
        idle_.pop_back();
      } else {
        c = std::make_unique<Connection>();
      }
      state.in_flight = c.get();
    }
    const bool reused = c->reused;
    bool answered = false, keep = false;
    auto result = exchange(call, *c, path, body, headers, answered, keep);
    bool was_cancelled = false;
    {
      std::lock_guard lock(mu_);
      if (auto it = calls_.find(call); it != calls_.end()) {
        it->second.in_flight = nullptr;
        was_cancelled = it->second.cancelled;
      }
    }
    {
      std::lock_guard lock(mu_);
      if (result && keep && !c->shut && c->socket.is_open()) {
        c->reused = true;
        c->buffer.clear();
        idle_.push_back(std::move(c));
      }
    }
    if (!result && was_cancelled) return host::Error("cancelled", host::Error::Code::kCancelled);
    if (!result && reused && !answered && attempt == 0 && result.error().code() != host::Error::Code::kCancelled)
      continue;  // the sidecar closed the idle connection: once more on a new one
    return result;
  }
}

}  // namespace plugboard::argo_deployer

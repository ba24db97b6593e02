#include "deployers/argo/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace plugboard::argo_deployer {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {
constexpr std::size_t kBodyLimit = 16 << 20;
}  // namespace

struct HttpClient::Connection {
  asio::io_context io;
  tcp::socket socket{io};
  beast::flat_buffer buffer;
  bool reused = false;
};

HttpClient::HttpClient(HttpTarget target) : target_(std::move(target)) {}
HttpClient::~HttpClient() = default;

void HttpClient::begin(std::uint64_t call) {
  std::lock_guard lock(mu_);
  calls_[call];
}

void HttpClient::end(std::uint64_t call) {
  std::lock_guard lock(mu_);
  calls_.erase(call);
}

void HttpClient::cancel(std::uint64_t call) {
  std::lock_guard lock(mu_);
  auto it = calls_.find(call);
  if (it == calls_.end()) return;
  it->second.cancelled = true;
  if (Connection* c = it->second.in_flight) {
    // Runs on the call's own thread, inside its io_context's run(): the socket is closed
    // where it is used, and the pending operations end with operation_aborted.
    asio::post(c->io, [c] {
      boost::system::error_code ignored;
      c->socket.shutdown(tcp::socket::shutdown_both, ignored);
      c->socket.close(ignored);
    });
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

host::Expected<HttpResponse> HttpClient::exchange(
    Connection& c, const std::string& path, const std::string& body,
    const std::vector<std::pair<std::string, std::string>>& headers, bool& answered, bool& keep) {
  boost::system::error_code ec;
  answered = false;
  keep = false;
  if (!c.socket.is_open()) {
    const auto address = asio::ip::make_address(target_.address, ec);
    if (ec) return host::Error("bad address '" + target_.address + "'");
    const tcp::endpoint endpoint(address, target_.port);
    if (target_.make_socket) {
      auto fd = target_.make_socket();
      if (!fd) return fd.error();
      c.socket.assign(endpoint.protocol(), *fd, ec);
      if (ec) return host::Error("socket: " + ec.message());
    }
    c.socket.async_connect(endpoint, [&](const boost::system::error_code& e) { ec = e; });
    c.io.restart();
    c.io.run();
    if (ec) {
      c.socket.close(ec);
      return host::Error(ec == asio::error::operation_aborted ? "cancelled" : ec.message());
    }
    c.socket.set_option(tcp::no_delay(true), ec);
  }
  http::request<http::string_body> request{http::verb::post, path, 11};
  request.set(http::field::host, target_.host_header);
  request.set(http::field::user_agent, "plugboard");
  for (const auto& [name, value] : headers) request.set(name, value);
  request.body() = body;
  request.keep_alive(true);
  request.prepare_payload();
  http::response_parser<http::string_body> parser;
  parser.body_limit(kBodyLimit);
  bool got_bytes = false;
  http::async_write(c.socket, request, [&](const boost::system::error_code& e, std::size_t) {
    ec = e;
    if (e) return;
    http::async_read(c.socket, c.buffer, parser,
                     [&](const boost::system::error_code& r, std::size_t n) {
                       ec = r;
                       got_bytes = n > 0 || parser.got_some();
                     });
  });
  c.io.restart();
  c.io.run();
  answered = got_bytes;
  if (ec) {
    boost::system::error_code ignored;
    c.socket.close(ignored);
    if (ec == asio::error::operation_aborted) return host::Error("cancelled");
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
      if (state.cancelled) return host::Error("cancelled");
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
    auto result = exchange(*c, path, body, headers, answered, keep);
    bool was_cancelled = false;
    {
      std::lock_guard lock(mu_);
      if (auto it = calls_.find(call); it != calls_.end()) {
        it->second.in_flight = nullptr;
        was_cancelled = it->second.cancelled;
      }
    }
    // A cancel posted after run() returned: run it now, so that it cannot close the
    // connection under a later call.
    c->io.restart();
    c->io.poll();
    if (result && keep && c->socket.is_open()) {
      c->reused = true;
      c->buffer.clear();
      std::lock_guard lock(mu_);
      idle_.push_back(std::move(c));
    }
    if (!result && was_cancelled) return host::Error("cancelled");
    if (!result && reused && !answered && attempt == 0 && result.error().message() != "cancelled")
      continue;  // the sidecar closed the idle connection: once more on a new one
    return result;
  }
}

}  // namespace plugboard::argo_deployer

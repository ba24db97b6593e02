// bench/sidecar_client.cc: the keep-alive client and the Python sidecar of sidecar_client.h.
#include "bench/sidecar_client.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <utility>  // before Boost.Asio 1.74, whose awaitable.hpp misses it under C++20

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/paths.h"

namespace plugboard::bench {

using tcp = boost::asio::ip::tcp;

struct KeepAliveConnection::Impl {
  boost::asio::io_context io;
  tcp::socket socket{io};
  boost::beast::flat_buffer buffer;
};

KeepAliveConnection::KeepAliveConnection(unsigned short port, int fd) : impl_(std::make_unique<Impl>()) {
  const tcp::endpoint to(boost::asio::ip::make_address("127.0.0.1"), port);
  if (fd >= 0) impl_->socket.assign(to.protocol(), fd);
  impl_->socket.connect(to);
  impl_->socket.set_option(tcp::no_delay(true));
}

KeepAliveConnection::~KeepAliveConnection() = default;

void KeepAliveConnection::post(const std::string& body, const std::string& token) {
  namespace http = boost::beast::http;
  http::request<http::string_body> req{http::verb::post, "/api/v1/template.execute", 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::content_type, "application/json");
  if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
  req.keep_alive(true);
  req.body() = body;
  req.prepare_payload();
  http::write(impl_->socket, req);
  http::response<http::string_body> res;
  http::read(impl_->socket, impl_->buffer, res);
  if (nlohmann::json::parse(res.body())["node"]["phase"] != "Succeeded") std::abort();
}

Sidecar::Sidecar(std::string body) : body_(std::move(body)) {
  int out[2];
  if (pipe(out) != 0) std::abort();
  const std::string script = (testing::sourceDir() / "bench/sidecar.py").string();
  pid_ = fork();
  if (pid_ == 0) {
    dup2(out[1], 1);
    execl("/usr/bin/python3", "python3", script.c_str(), "0", nullptr);
    _exit(127);
  }
  close(out[1]);
  char line[64] = {};
  ssize_t n = read(out[0], line, sizeof line - 1);
  close(out[0]);
  int port = 0;
  if (n <= 0 || std::sscanf(line, "ready %d", &port) != 1) {
    std::fprintf(stderr, "bench: the sidecar did not start\n");
    std::exit(1);
  }
  connection_ = std::make_unique<KeepAliveConnection>(static_cast<unsigned short>(port));
}

Sidecar::~Sidecar() {
  kill(pid_, SIGTERM);
  waitpid(pid_, nullptr, 0);
}

}  // namespace plugboard::bench

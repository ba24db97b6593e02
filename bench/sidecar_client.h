// bench/sidecar_client.h: one keep-alive HTTP connection with Nagle off that POSTs Argo
// requests (the floor of a call to an Argo sidecar), and the Argo-style Python sidecar
// (bench/sidecar.py under /usr/bin/python3) reached through it, for the benchmarks that
// compare against a sidecar.
#ifndef PLUGBOARD_BENCH_SIDECAR_CLIENT_H_
#define PLUGBOARD_BENCH_SIDECAR_CLIENT_H_

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>  // before Boost.Asio 1.74, whose awaitable.hpp misses it under C++20

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/paths.h"

namespace plugboard::bench {

// One keep-alive connection; post() sends an Argo request and checks that it succeeded.
class KeepAliveConnection {
 public:
  using tcp = boost::asio::ip::tcp;
  // Connects to 127.0.0.1:port, with a socket of its own or `fd` (an unconnected TCP
  // socket, e.g. made in another network namespace) when not negative.
  explicit KeepAliveConnection(unsigned short port, int fd = -1) {
    const tcp::endpoint to(boost::asio::ip::make_address("127.0.0.1"), port);
    if (fd >= 0) socket_.assign(to.protocol(), fd);
    socket_.connect(to);
    socket_.set_option(tcp::no_delay(true));
  }

  void post(const std::string& body, const std::string& token = "") {
    namespace http = boost::beast::http;
    http::request<http::string_body> req{http::verb::post, "/api/v1/template.execute", 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::content_type, "application/json");
    if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
    req.keep_alive(true);
    req.body() = body;
    req.prepare_payload();
    http::write(socket_, req);
    http::response<http::string_body> res;
    http::read(socket_, buffer_, res);
    if (nlohmann::json::parse(res.body())["node"]["phase"] != "Succeeded") std::abort();
  }

 private:
  boost::asio::io_context io_;
  tcp::socket socket_{io_};
  boost::beast::flat_buffer buffer_;
};

class Sidecar {
 public:
  // Starts the sidecar and connects; `body` is the Argo request each call() sends.
  explicit Sidecar(std::string body) : body_(std::move(body)) {
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
  ~Sidecar() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  Sidecar(const Sidecar&) = delete;
  Sidecar& operator=(const Sidecar&) = delete;

  void call() { connection_->post(body_); }

 private:
  const std::string body_;
  pid_t pid_ = 0;
  std::unique_ptr<KeepAliveConnection> connection_;
};

}  // namespace plugboard::bench

#endif  // PLUGBOARD_BENCH_SIDECAR_CLIENT_H_

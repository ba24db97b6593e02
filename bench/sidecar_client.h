// bench/sidecar_client.h: the Argo-style Python sidecar (bench/sidecar.py under
// /usr/bin/python3) and one keep-alive HTTP connection to it with Nagle off, for the
// benchmarks that compare against it.
#ifndef PLUGBOARD_BENCH_SIDECAR_CLIENT_H_
#define PLUGBOARD_BENCH_SIDECAR_CLIENT_H_

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>  // before Boost.Asio 1.74, whose awaitable.hpp misses it under C++20

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/paths.h"

namespace plugboard::bench {

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
    socket_.connect(
        {boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
    socket_.set_option(tcp::no_delay(true));
  }
  ~Sidecar() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  Sidecar(const Sidecar&) = delete;
  Sidecar& operator=(const Sidecar&) = delete;

  void call() {
    namespace http = boost::beast::http;
    http::request<http::string_body> req{http::verb::post, "/api/v1/template.execute", 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::content_type, "application/json");
    req.keep_alive(true);
    req.body() = body_;
    req.prepare_payload();
    http::write(socket_, req);
    http::response<http::string_body> res;
    http::read(socket_, buffer_, res);
    if (nlohmann::json::parse(res.body())["node"]["phase"] != "Succeeded") std::abort();
  }

 private:
  using tcp = boost::asio::ip::tcp;
  const std::string body_;
  pid_t pid_ = 0;
  boost::asio::io_context io_;
  tcp::socket socket_{io_};
  boost::beast::flat_buffer buffer_;
};

}  // namespace plugboard::bench

#endif  // PLUGBOARD_BENCH_SIDECAR_CLIENT_H_

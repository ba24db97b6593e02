#include "tests/support/server_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <utility>  // before Boost.Asio 1.74, whose awaitable.hpp misses it under C++20

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "tests/support/paths.h"

extern char** environ;

namespace plugboard::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

ServeProcess::ServeProcess(std::vector<std::string> args, const ServeLaunch& launch) {
  args.insert(args.begin(), {binary().string(), "serve"});
  args.insert(args.begin(), launch.wrapper.begin(), launch.wrapper.end());
  args.insert(args.end(), {"--listen", "127.0.0.1:0"});
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  if (launch.log_file.empty()) {
    posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  } else {
    posix_spawn_file_actions_addopen(&actions, 2, launch.log_file.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (posix_spawnp(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
    throw std::runtime_error("cannot start plugboard serve");
  }
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  out_fd_ = out[0];
  // Wait up to 10 s for "serving N plugins on http://127.0.0.1:PORT".
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (port_ == 0 && std::chrono::steady_clock::now() < deadline) {
    pollfd p{out_fd_, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    ssize_t n = read(out_fd_, buf, sizeof buf);
    if (n <= 0) break;
    output_.append(buf, static_cast<std::size_t>(n));
    auto pos = output_.find("http://127.0.0.1:");
    if (pos != std::string::npos && output_.find('\n', pos) != std::string::npos) {
      port_ = static_cast<unsigned short>(std::stoi(output_.substr(pos + 17)));
    }
  }
  if (port_ == 0) throw std::runtime_error("plugboard serve did not start:\n" + output_);
}

bool ServeProcess::waitForOutput(const std::string& text, std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (output_.find(text) == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || out_fd_ < 0) return false;
    pollfd p{out_fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(out_fd_, buf, sizeof buf);
    if (n <= 0) return false;  // it exited
    output_.append(buf, static_cast<std::size_t>(n));
  }
  return true;
}

int ServeProcess::stop(int signal) {
  if (pid_ < 0) return -1;
  if (signal != 0) kill(pid_, signal);
  for (;;) {
    char buf[4096];
    ssize_t n = read(out_fd_, buf, sizeof buf);
    if (n <= 0) break;
    output_.append(buf, static_cast<std::size_t>(n));
  }
  close(out_fd_);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

ServeProcess::~ServeProcess() {
  if (pid_ >= 0) stop(SIGTERM);  // let it remove its runtime directory
}

struct HttpClient::Impl {
  explicit Impl(unsigned short p) : port(p) { connect(); }

  // A connection that cannot be made leaves the socket closed: requests on it get no reply.
  void connect() {
    buffer.clear();
    socket = tcp::socket(io);
    beast::error_code ec;
    socket.connect({asio::ip::make_address("127.0.0.1"), port}, ec);
    if (!ec) socket.set_option(tcp::no_delay(true), ec);
  }

  const unsigned short port;
  asio::io_context io;
  tcp::socket socket{io};
  beast::flat_buffer buffer;
  bool server_closes = false;  // the last reply said "Connection: close"

  HttpReply readReply() {
    HttpReply reply;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    beast::error_code ec;
    http::read(socket, buffer, parser, ec);
    if (ec) return reply;
    auto res = parser.release();
    server_closes = !res.keep_alive();
    reply.status = static_cast<int>(res.result_int());
    reply.body = res.body();
    for (const auto& field : res) reply.headers[std::string(field.name_string())] = std::string(field.value());
    return reply;
  }
};

HttpClient::HttpClient(unsigned short port) : impl_(std::make_unique<Impl>(port)) {}

HttpClient::~HttpClient() = default;

HttpReply HttpClient::request(const std::string& method, const std::string& target, const std::string& body,
                              const std::map<std::string, std::string>& headers) {
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, "127.0.0.1");
  for (const auto& [k, v] : headers) req.set(k, v);
  req.body() = body;
  req.keep_alive(true);
  req.prepare_payload();
  // As HTTP clients do, a connection the server said it closes is not used again.
  if (std::exchange(impl_->server_closes, false)) impl_->connect();
  beast::error_code ec;
  http::write(impl_->socket, req, ec);
  if (ec) return {};
  return impl_->readReply();
}

HttpReply HttpClient::raw(const std::string& bytes) {
  beast::error_code ec;
  asio::write(impl_->socket, asio::buffer(bytes), ec);
  if (ec) return {};
  return impl_->readReply();
}

bool HttpClient::closedByServer(std::chrono::milliseconds within) {
  pollfd p{impl_->socket.native_handle(), POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(within.count())) <= 0) return false;  // still open
  char c;
  beast::error_code ec;
  impl_->socket.read_some(asio::buffer(&c, 1), ec);
  return ec == asio::error::eof || ec == asio::error::connection_reset;
}

}  // namespace plugboard::testing

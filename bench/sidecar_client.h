// bench/sidecar_client.h: one keep-alive HTTP connection with Nagle off that POSTs Argo
// requests (the floor of a call to an Argo sidecar), and the Argo-style Python sidecar
// (bench/sidecar.py under /usr/bin/python3) reached through it, for the benchmarks that
// compare against a sidecar. Compiled once (sidecar_client.cc), so that the benchmarks
// do not each compile Beast.
#ifndef PLUGBOARD_BENCH_SIDECAR_CLIENT_H_
#define PLUGBOARD_BENCH_SIDECAR_CLIENT_H_

#include <sys/types.h>

#include <memory>
#include <string>

namespace plugboard::bench {

// One keep-alive connection; post() sends an Argo request and checks that it succeeded.
class KeepAliveConnection {
 public:
  // Connects to 127.0.0.1:port, with a socket of its own or `fd` (an unconnected TCP
  // socket, e.g. made in another network namespace) when not negative.
  explicit KeepAliveConnection(unsigned short port, int fd = -1);
  ~KeepAliveConnection();
  KeepAliveConnection(const KeepAliveConnection&) = delete;
  KeepAliveConnection& operator=(const KeepAliveConnection&) = delete;

  void post(const std::string& body, const std::string& token = "");

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class Sidecar {
 public:
  // Starts the sidecar and connects; `body` is the Argo request each call() sends.
  explicit Sidecar(std::string body);
  ~Sidecar();
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

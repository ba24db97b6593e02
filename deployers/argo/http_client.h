// deployers/argo/http_client.h: an HTTP/1.1 client (Boost.Beast) for one plugin sidecar,
// keeping its connections alive between calls, whose calls a cancel from another thread
// ends at once.
//
// A call is begun with begin(id) and ended with end(id); between them post() may run any
// number of requests for it, each on an idle connection or a new one, with blocking reads
// and writes on the calling thread, and waitCancelled() sleeps between them. cancel(id)
// shuts down the socket of the request in flight (its read or write returns at once and
// the request fails with Error::Code::kCancelled; the connection is not used again), wakes
// waitCancelled(), and makes every later post() of that call fail. A request that fails on a reused
// connection before any byte of its answer came is sent again once on a new connection (the sidecar
// may have closed an idle connection). Thread-safe: calls run concurrently, each request on its own
// connection.
#ifndef PLUGBOARD_DEPLOYERS_ARGO_HTTP_CLIENT_H_
#define PLUGBOARD_DEPLOYERS_ARGO_HTTP_CLIENT_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <plugboard/host/expected.h>

namespace plugboard::argo_deployer {

struct HttpTarget {
  std::string address = "127.0.0.1";  // an IPv4 or IPv6 address, numeric
  unsigned short port = 0;
  std::string host_header;  // the Host header, e.g. "localhost:4355"
  // Makes the unconnected TCP socket for a new connection (e.g. in another network
  // namespace); when empty, an ordinary one.
  std::function<host::Expected<int>()> make_socket;
};

struct HttpResponse {
  unsigned status = 0;
  std::string reason;
  std::string body;
};

class HttpClient {
 public:
  explicit HttpClient(HttpTarget target);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  void begin(std::uint64_t call);
  void end(std::uint64_t call);
  void cancel(std::uint64_t call);
  bool cancelled(std::uint64_t call);
  // Sleeps up to `d`; true as soon as the call is cancelled.
  bool waitCancelled(std::uint64_t call, std::chrono::milliseconds d);

  // POSTs `body` to `path` with `headers`. Errors: the connection could not be made or
  // broke ("connection refused", "end of stream"), the answer is not HTTP or larger than
  // 16 MiB, or the call was cancelled (Error::Code::kCancelled).
  host::Expected<HttpResponse> post(
      std::uint64_t call, const std::string& path, const std::string& body,
      const std::vector<std::pair<std::string, std::string>>& headers);

 private:
  struct Connection;
  struct CallState {
    bool cancelled = false;
    Connection* in_flight = nullptr;
  };
  // Connects `c`, seeing a cancel of `call` while it waits.
  host::Status connect(std::uint64_t call, Connection& c);
  // One request on `c`; `answered` tells whether any byte of an answer came.
  host::Expected<HttpResponse> exchange(
      std::uint64_t call, Connection& c, const std::string& path, const std::string& body,
      const std::vector<std::pair<std::string, std::string>>& headers, bool& answered, bool& keep);

  const HttpTarget target_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::uint64_t, CallState> calls_;
  std::set<std::uint64_t> early_;  // calls cancelled before they began
  std::vector<std::unique_ptr<Connection>> idle_;
};

}  // namespace plugboard::argo_deployer

#endif  // PLUGBOARD_DEPLOYERS_ARGO_HTTP_CLIENT_H_

// The argo deployer's HTTP client (deployers/argo/http_client.h) against a real TCP
// listener: a cancelled request ends with the host kit's cancelled code, which is how the
// deployer tells a cancel from a sidecar that failed (no message is compared).
#include "deployers/argo/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>

namespace plugboard::argo_deployer {
namespace {

using Code = host::Error::Code;

// A listening socket on 127.0.0.1 that accepts when asked and never answers.
class SilentListener {
 public:
  SilentListener() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
    }
    port_ = ntohs(a.sin_port);
  }
  ~SilentListener() {
    for (int fd : accepted_) ::close(fd);
    ::close(fd_);
  }
  unsigned short port() const { return port_; }
  // Waits for the next connection and keeps it open, unanswered.
  void accept() { accepted_.push_back(::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC)); }

 private:
  int fd_;
  unsigned short port_ = 0;
  std::vector<int> accepted_;
};

HttpTarget targetAt(unsigned short port) {
  HttpTarget t;
  t.port = port;
  t.host_header = "localhost:" + std::to_string(port);
  return t;
}

TEST(ArgoHttpClientTest, ACancelledRequestEndsWithTheCancelledCode) {
  SilentListener sidecar;
  HttpClient client(targetAt(sidecar.port()));
  client.begin(1);
  host::Expected<HttpResponse> result = host::Error("not run");
  std::thread request([&] { result = client.post(1, "/api/v1/template.execute", "{}", {}); });
  sidecar.accept();  // the request is under way and will get no answer
  client.cancel(1);
  request.join();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), Code::kCancelled) << result.error().message();

  // Every later request of that call is refused the same way, without connecting.
  auto again = client.post(1, "/api/v1/template.execute", "{}", {});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code(), Code::kCancelled);
  client.end(1);
}

TEST(ArgoHttpClientTest, ACancelBeforeTheCallBeganRefusesItsRequests) {
  SilentListener sidecar;
  HttpClient client(targetAt(sidecar.port()));
  client.cancel(7);
  client.begin(7);
  auto result = client.post(7, "/api/v1/template.execute", "{}", {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), Code::kCancelled);
  client.end(7);
}

TEST(ArgoHttpClientTest, AFailureThatIsNotACancelHasAnotherCode) {
  unsigned short closed_port = 0;
  {
    SilentListener gone;  // a port that was just free, and is closed again
    closed_port = gone.port();
  }
  HttpClient client(targetAt(closed_port));
  client.begin(2);
  auto result = client.post(2, "/api/v1/template.execute", "{}", {});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().code(), Code::kCancelled) << result.error().message();
  client.end(2);
}

}  // namespace
}  // namespace plugboard::argo_deployer

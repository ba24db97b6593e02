// tests/support/server_process.h: `plugboard serve` in the background for tests, and a
// small HTTP/1.1 client to talk to it.
#ifndef PLUGBOARD_TESTS_SUPPORT_SERVER_PROCESS_H_
#define PLUGBOARD_TESTS_SUPPORT_SERVER_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace plugboard::testing {

// How ServeProcess starts serve, when not as is.
struct ServeLaunch {
  // A command that runs the rest of the command line in its place (exec), such as
  // {"prlimit", "--nofile=64:64", "--"}; pid() is then still serve's.
  std::vector<std::string> wrapper;
  // serve's stderr (its log) goes to this file instead of output(), so that a test can
  // read it while serve runs and a log that floods does not block serve.
  std::string log_file;
};

// Starts `plugboard serve ARGS --listen 127.0.0.1:0` and waits for the line that says
// where it listens. stop() (or the destructor) sends `signal` and waits for the exit.
class ServeProcess {
 public:
  explicit ServeProcess(std::vector<std::string> args, const ServeLaunch& launch = {});
  ~ServeProcess();
  unsigned short port() const { return port_; }
  pid_t pid() const { return pid_; }
  // Sends `signal` (none when 0), waits for the exit, returns the exit code; output() is
  // then complete.
  int stop(int signal = 15);
  // Reads the output until it holds `text` (true) or `within` has passed (false).
  // REQUIRES: not called while another thread is in stop().
  bool waitForOutput(const std::string& text,
                     std::chrono::milliseconds within = std::chrono::seconds(10));
  const std::string& output() const { return output_; }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  unsigned short port_ = 0;
  std::string output_;
};

struct HttpReply {
  int status = 0;  // 0: no reply (connection closed)
  std::string body;
  std::map<std::string, std::string> headers;
};

// One keep-alive connection to 127.0.0.1:port.
class HttpClient {
 public:
  explicit HttpClient(unsigned short port);
  ~HttpClient();
  // One request and its reply. After a reply with "Connection: close" the next request
  // goes on a new connection, as HTTP clients do.
  HttpReply request(const std::string& method, const std::string& target,
                    const std::string& body = "",
                    const std::map<std::string, std::string>& headers = {});
  // Sends raw bytes and reads one reply (or none, if the server closes).
  HttpReply raw(const std::string& bytes);
  // True when the server closes this connection (a read sees end of stream) within `within`.
  bool closedByServer(std::chrono::milliseconds within = std::chrono::seconds(10));

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_SERVER_PROCESS_H_

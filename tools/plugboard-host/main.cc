// plugboard-host: runs one native plugin .so in its own process and serves it over the
// out-of-process protocol v1 (docs/protocol.md) on stdin and stdout, so that a plugin that
// crashes, hangs or scribbles on memory takes only this process down.
//
//   plugboard-host PLUGIN.so [--config JSON]
//
// The plugin's own writes to stdout go to stderr: the protocol has a private copy of the
// original stdout. The plugin's log lines become `log` messages. Exit status: 0 after
// `shutdown` or end of input, 2 for a protocol error, 3 when the plugin cannot be loaded.
// Built on the host kit alone (plugboard/host/*.h), as a third party's host could be.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <plugboard/host/json_text.h>
#include <plugboard/host/native.h>
#include <plugboard/host/protocol.h>

namespace {

namespace host = plugboard::host;
using host::Json;

// Writes whole frames to the protocol descriptor, one at a time.
class Channel {
 public:
  explicit Channel(int fd) : fd_(fd) {}
  void send(const Json& message) { sendText(host::frame(message)); }
  // `f` must be one whole frame, newline included.
  void sendText(const std::string& f) {
    std::lock_guard lock(mu_);
    for (std::size_t done = 0; done < f.size();) {
      ssize_t n = ::write(fd_, f.data() + done, f.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the runtime went away; reading will notice
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  int fd_;
  std::mutex mu_;
};

// The `log` message for one of the plugin's log lines.
Json logMessage(int level, std::string_view text) {
  const char* name = level <= PLUGBOARD_LOG_DEBUG  ? "debug"
                     : level == PLUGBOARD_LOG_INFO ? "info"
                     : level == PLUGBOARD_LOG_WARN ? "warn"
                                                   : "error";
  return {{"type", "log"}, {"level", name}, {"message", text}};
}

int fail(int status, const std::string& message) {
  std::fprintf(stderr, "plugboard-host: %s\n", message.c_str());
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0) {
    std::printf("usage: plugboard-host PLUGIN.so [--config JSON]\n"
                "Serves one plugin over the out-of-process protocol on stdin/stdout, or on the\n"
                "descriptors PLUGBOARD_PROTOCOL_FDS=IN,OUT names (docs/protocol.md).\n");
    return argc < 2 ? 2 : 0;
  }
  Json config = Json::object();
  if (argc >= 4 && std::strcmp(argv[2], "--config") == 0) {
    config = Json::parse(argv[3], nullptr, false);
    if (!config.is_object()) return fail(2, "--config must be a JSON object");
  }
  int input_fd = STDIN_FILENO, protocol_fd = -1;
  if (const char* fds = std::getenv(host::kProtocolFdsVariable); fds != nullptr) {
    // The channel on two inherited descriptors (a container engine passes them through):
    // kept from what the plugin starts, as is the variable.
    if (std::sscanf(fds, "%d,%d", &input_fd, &protocol_fd) != 2 || input_fd < 0 || protocol_fd < 0 ||
        ::fcntl(input_fd, F_SETFD, FD_CLOEXEC) != 0 || ::fcntl(protocol_fd, F_SETFD, FD_CLOEXEC) != 0) {
      return fail(2, std::string(host::kProtocolFdsVariable) + "='" + fds + "' does not name two open descriptors");
    }
    ::unsetenv(host::kProtocolFdsVariable);
  } else {
    // The protocol keeps the real stdout, not inherited by what the plugin starts.
    protocol_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (protocol_fd < 0) return fail(2, "cannot set up stdout");
  }
  // Everything else written to stdout goes to stderr.
  if (::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return fail(2, "cannot set up stdout");
  Channel channel(protocol_fd);

  auto library = host::NativeLibrary::load(argv[1]);
  if (!library) return fail(3, library.error().message());
  const Json manifest = Json::parse((*library)->manifestText(), nullptr, false);
  if (!manifest.is_object()) return fail(3, "plugin '" + (*library)->name() + "': its manifest is not a JSON object");
  auto made = (*library)->createInstance(
      config.dump(), [&channel](int level, std::string_view text) { channel.send(logMessage(level, text)); });
  if (!made) return fail(3, made.error().message());
  auto& instance = **made;
  const std::string& plugin_name = (*library)->name();
  const bool serial = manifest.value("concurrency", "") == "serial";

  std::mutex mu;  // guards everything below
  std::condition_variable cv;       // `running` changed, or `stop` was set
  std::condition_variable lead_cv;  // the reading is free to take
  std::map<std::uint64_t, bool> running;  // id -> cancel asked
  bool greeted = false;
  bool stop = false;
  bool leading = false;  // a thread is reading the runtime's frames
  int idle = 0;          // threads waiting to read
  int status = 0;
  std::mutex serial_mu;
  host::FrameReader frames;  // used by the reading thread only
  std::deque<std::string> lines;        // read, not yet handled; the reading thread's

  // The next frame from the runtime, or nullopt at the end of input or a framing error
  // (then `status` says which).
  auto nextLine = [&]() -> std::optional<std::string> {
    char buf[65536];
    while (lines.empty()) {
      const ssize_t n = ::read(input_fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;  // end of input: like shutdown
      std::vector<std::string> got;
      if (auto st = frames.feed(std::string_view(buf, static_cast<std::size_t>(n)), got); !st) {
        std::lock_guard lock(mu);
        status = fail(2, st.error().message());
        return std::nullopt;
      }
      for (auto& l : got) lines.push_back(std::move(l));
    }
    std::string line = std::move(lines.front());
    lines.pop_front();
    return line;
  };

  auto finish = [&](int code) {
    std::lock_guard lock(mu);
    if (code != 0 && status == 0) status = code;
    stop = true;
    cv.notify_all();
    lead_cv.notify_all();
  };

  auto execute = [&](std::uint64_t id, const std::string& request) {
    std::string result;
    {
      std::unique_lock<std::mutex> one_at_a_time;
      if (serial) one_at_a_time = std::unique_lock(serial_mu);
      bool cancelled;
      {
        std::lock_guard lock(mu);
        cancelled = running[id];
      }
      result = cancelled ? std::string(R"({"phase":"Error","message":"cancelled before it started"})")
                         : instance.execute(id, request);
      // A result that is not one JSON object, or one the runtime refuses for its depth,
      // would break the channel; the runtime gets an Error instead. (Raw newlines can only
      // be whitespace in valid JSON.)
      std::replace(result.begin(), result.end(), '\n', ' ');
      if (result.empty() || host::holdsNul(result) || !Json::accept(result)) {
        result = Json{{"phase", "Error"}, {"message", "plugin '" + plugin_name + "' returned invalid JSON"}}
                     .dump();
      } else if (host::jsonDeeperThan(result, host::kMaxJsonDepth - 1)) {
        // Its frame nests it one level deeper.
        result = Json{{"phase", "Error"},
                      {"message", "plugin '" + plugin_name + "' returned a result " +
                                      host::tooDeepText(host::kMaxJsonDepth - 1)}}
                     .dump();
      }
    }
    channel.sendText(R"({"type":"result","id":)" + std::to_string(id) + R"(,"result":)" + result + "}\n");
    std::lock_guard lock(mu);
    running.erase(id);
    cv.notify_all();
  };

  // Leader and followers: one thread at a time reads the runtime's frames. When it reads an
  // `execute` it hands the reading to another thread (an idle one, or a new one) and runs
  // the call itself, so a call crosses no thread between its frame and its result, and
  // calls still run concurrently.
  std::function<void()> serve;
  serve = [&] {
    for (;;) {
      {
        std::unique_lock lock(mu);
        ++idle;
        lead_cv.wait(lock, [&] { return stop || !leading; });
        --idle;
        if (stop) return;
        leading = true;
      }
      for (;;) {
        auto line = nextLine();
        if (!line) return finish(0);
        auto message = host::parseFrame(*line, host::Sender::kRuntime);
        if (!message) return finish(fail(2, message.error().message()));
        const std::string type = (*message)["type"];
        if (type == "hello") {
          bool offered = false;
          for (const auto& v : (*message)["protocols"]) offered = offered || v == host::kProtocolVersion;
          if (!offered) {
            return finish(fail(2, "the runtime offers protocols " + (*message)["protocols"].dump() +
                                      "; this host speaks 1"));
          }
          channel.send({{"type", "hello"}, {"protocol", host::kProtocolVersion},
                        {"manifest", manifest}});
          std::lock_guard lock(mu);
          greeted = true;
        } else if (!greeted) {
          return finish(fail(2, "'" + type + "' before 'hello'"));
        } else if (type == "execute") {
          const std::uint64_t id = (*message)["id"];
          const std::string request = (*message)["request"].dump();
          {
            std::lock_guard lock(mu);
            running.emplace(id, false);
            leading = false;
            if (idle == 0) {
              std::thread(serve).detach();
            } else {
              lead_cv.notify_one();
            }
          }
          execute(id, request);
          break;  // back to waiting for the reading
        } else if (type == "cancel") {
          const std::uint64_t id = (*message)["id"];
          std::lock_guard lock(mu);
          if (auto it = running.find(id); it != running.end()) it->second = true;
          cv.notify_all();
        } else if (type == "shutdown") {
          return finish(0);
        }
      }
    }
  };

  // Cancellation may arrive before the plugin has registered the call; repeat it until
  // the call ends.
  std::thread canceller([&] {
    std::unique_lock lock(mu);
    while (!stop || !running.empty()) {
      cv.wait_for(lock, std::chrono::milliseconds(20));
      for (const auto& [id, cancel] : running) {
        if (cancel) instance.cancel(id);
      }
      if (stop) break;
    }
  });

  std::thread(serve).detach();
  // Wait for the end of input, shutdown or an error; let the calls in flight answer; go.
  int exit_status;
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return stop; });
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return running.empty(); });
    exit_status = status;
  }
  canceller.join();
  std::fflush(stdout);
  std::_Exit(exit_status);  // calls that did not answer still run plugin code
}

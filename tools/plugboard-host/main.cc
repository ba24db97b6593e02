// plugboard-host: runs one native plugin .so in its own process and serves it over the
// out-of-process protocol v1 (docs/protocol.md) on stdin and stdout, so that a plugin that
// crashes, hangs or scribbles on memory takes only this process down.
//
//   plugboard-host PLUGIN.so [--config JSON]
//
// The plugin's own writes to stdout go to stderr: the protocol has a private copy of the
// original stdout. The plugin's log lines become `log` messages. No frame it sends exceeds
// the frame limit the runtime's hello gives: a larger result becomes an Error for that call
// alone, a longer log line is cut. A call during which an allocation failed (operator new)
// is answered with "out_of_memory" so that the runtime replaces this process. Exit status:
// 0 after `shutdown` or end of input, 2 for a protocol error, 3 when the plugin cannot be
// loaded. Built on the host kit alone (plugboard/host/*.h), as a third party's host could be.
#include <fcntl.h>
#include <sys/resource.h>
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
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include <plugboard/host/json_text.h>
#include <plugboard/host/native.h>
#include <plugboard/host/protocol.h>

namespace {

namespace host = plugboard::host;
using host::Json;

// Writes whole frames to the protocol descriptor, one at a time, none over the frame limit.
class Channel {
 public:
  explicit Channel(int fd) : fd_(fd) {}
  void setLimit(std::size_t limit) { limit_ = limit; }
  void send(const Json& message) { sendText(host::frame(message)); }
  // A `log` message for one of the plugin's log lines, cut to fit the frame limit.
  void sendLog(int level, std::string_view text) {
    const char* name = level <= PLUGBOARD_LOG_DEBUG  ? "debug"
                       : level == PLUGBOARD_LOG_INFO ? "info"
                       : level == PLUGBOARD_LOG_WARN ? "warn"
                                                     : "error";
    Json message = {{"type", "log"}, {"level", name}, {"message", text}};
    std::string f = host::frame(message);
    // Escapes make the frame longer than the text: cut until it fits.
    while (f.size() - 1 > limit_ && !text.empty()) {
      const std::size_t excess = f.size() - 1 - limit_ + 64;
      text = text.substr(0, text.size() > excess ? text.size() - excess : 0);
      message["message"] = std::string(text) + " [cut to fit the protocol's frame limit]";
      f = host::frame(message);
    }
    sendText(f);
  }
  // The result frame of call `id`: `result` (one JSON object), or an Error naming the frame
  // limit when the frame would exceed it.
  void sendResult(std::uint64_t id, const std::string& result, bool out_of_memory,
                  const std::string& plugin_name) {
    const std::string head = R"({"type":"result","id":)" + std::to_string(id) + R"(,"result":)";
    const std::string tail = out_of_memory ? ",\"out_of_memory\":true}\n" : "}\n";
    const std::size_t size = head.size() + result.size() + tail.size() - 1;
    if (size <= limit_) return sendText(head + result + tail);
    const Json error = {
        {"phase", "Error"},
        {"message", "plugin '" + plugin_name +
                        "' returned a result too large for the protocol: its frame of " +
                        std::to_string(size) + " bytes exceeds the frame limit of " +
                        std::to_string(limit_) + " bytes (the deployer's option 'frame_limit')"}};
    sendText(head + error.dump() + tail);
  }
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
  std::atomic<std::size_t> limit_{host::kDefaultFrameLimit};  // the reader sets it at hello
  std::mutex mu_;
};

// Allocation failures. operator new calls the handler below when memory runs out (most
// often under the runtime's `memory` limit, RLIMIT_AS): it marks the thread, so that the
// call running on it is answered with "out_of_memory", says so once on stderr (the tail the
// runtime quotes if the process then dies), and throws std::bad_alloc as the default does.
thread_local bool t_allocation_failed = false;
std::atomic<bool> g_allocation_failure_told{false};
char g_allocation_failure_line[200];

void onAllocationFailure() {
  t_allocation_failed = true;
  if (!g_allocation_failure_told.exchange(true)) {
    [[maybe_unused]] ssize_t ignored =
        ::write(STDERR_FILENO, g_allocation_failure_line, std::strlen(g_allocation_failure_line));
  }
  throw std::bad_alloc();
}

void watchAllocations() {
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    std::snprintf(g_allocation_failure_line, sizeof g_allocation_failure_line,
                  "plugboard-host: out of memory: an allocation failed under the address-space "
                  "limit of %llu bytes\n",
                  static_cast<unsigned long long>(as.rlim_cur));
  } else {
    std::snprintf(g_allocation_failure_line, sizeof g_allocation_failure_line,
                  "plugboard-host: out of memory: an allocation failed\n");
  }
  std::set_new_handler(&onAllocationFailure);
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
  watchAllocations();

  auto library = host::NativeLibrary::load(argv[1]);
  if (!library) return fail(3, library.error().message());
  const Json manifest = Json::parse((*library)->manifestText(), nullptr, false);
  if (!manifest.is_object()) return fail(3, "plugin '" + (*library)->name() + "': its manifest is not a JSON object");
  auto made = (*library)->createInstance(
      config.dump(),
      [&channel](int level, std::string_view text) { channel.sendLog(level, text); });
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
  bool input_ended = false;  // the end of the channel, not a shutdown, stopped the host
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
    t_allocation_failed = false;
    {
      std::unique_lock<std::mutex> one_at_a_time;
      if (serial) one_at_a_time = std::unique_lock(serial_mu);
      bool cancelled;
      {
        std::lock_guard lock(mu);
        cancelled = running[id];
      }
      try {
        result = cancelled
                     ? std::string(R"({"phase":"Error","message":"cancelled before it started"})")
                     : instance.execute(id, request);
        // A result that is not one JSON object, or one the runtime refuses for its depth,
        // would break the channel; the runtime gets an Error instead. (Raw newlines can only
        // be whitespace in valid JSON.)
        std::replace(result.begin(), result.end(), '\n', ' ');
        if (result.empty() || host::holdsNul(result) || !Json::accept(result)) {
          result = Json{{"phase", "Error"},
                        {"message", "plugin '" + plugin_name + "' returned invalid JSON"}}
                       .dump();
        } else if (host::jsonDeeperThan(result, host::kMaxJsonDepth - 1)) {
          // Its frame nests it one level deeper.
          result = Json{{"phase", "Error"},
                        {"message", "plugin '" + plugin_name + "' returned a result " +
                                        host::tooDeepText(host::kMaxJsonDepth - 1)}}
                       .dump();
        }
      } catch (const std::bad_alloc&) {  // in this host's own handling of the result
        std::string().swap(result);
        t_allocation_failed = true;
        result = R"({"phase":"Error","message":"out of memory while handling the result"})";
      }
    }
    channel.sendResult(id, result, t_allocation_failed, plugin_name);
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
        if (!line) {
          // The runtime closed the channel or is gone (killed, or it ended without waiting
          // for this call): no answer can reach it, so the calls in flight are cancelled
          // and get a short while to return, not the wait a shutdown gives them.
          std::lock_guard lock(mu);
          input_ended = true;
          for (auto& [id, cancel] : running) cancel = true;
          cv.notify_all();
        }
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
          // The runtime's frame limit binds both directions from now on.
          if (const auto limit = message->find("frame_limit"); limit != message->end()) {
            frames.setLimit(limit->get<std::size_t>());
            channel.setLimit(limit->get<std::size_t>());
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
              try {
                std::thread(serve).detach();
              } catch (const std::system_error&) {
                // No thread to be had (out of memory or threads): this one reads again once
                // its call is done, so calls run one at a time until threads can be made.
              }
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
    cv.wait_for(lock, input_ended ? std::chrono::seconds(1) : std::chrono::seconds(10),
                [&] { return running.empty(); });
    exit_status = status;
  }
  canceller.join();
  std::fflush(stdout);
  std::_Exit(exit_status);  // calls that did not answer still run plugin code
}

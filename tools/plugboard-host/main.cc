// plugboard-host: runs one native plugin .so in its own process and serves it over the
// out-of-process protocol v1 (docs/protocol.md) on stdin and stdout, so that a plugin that
// crashes, hangs or scribbles on memory takes only this process down.
//
//   plugboard-host PLUGIN.so [--config JSON]
//
// The plugin's own writes to stdout go to stderr: the protocol has a private copy of the
// original stdout. The plugin's log lines become `log` messages. Exit status: 0 after
// `shutdown` or end of input, 2 for a protocol error, 3 when the plugin cannot be loaded.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "core/loader.h"
#include "core/protocol.h"

namespace {

using plugboard::core::Json;

// Writes whole frames to the protocol descriptor, one at a time.
class Channel {
 public:
  explicit Channel(int fd) : fd_(fd) {}
  void send(const Json& message) {
    const std::string f = plugboard::core::frame(message);
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

// Turns the plugin's log lines (which the loader sends to spdlog, tagged "[name] ") into
// `log` messages.
class LogSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit LogSink(Channel& channel) : channel_(channel) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::string text(msg.payload.data(), msg.payload.size());
    if (text.rfind('[', 0) == 0) {
      if (auto end = text.find("] "); end != std::string::npos) text.erase(0, end + 2);
    }
    const char* level = msg.level <= spdlog::level::debug ? "debug"
                        : msg.level == spdlog::level::info ? "info"
                        : msg.level == spdlog::level::warn ? "warn"
                                                           : "error";
    channel_.send({{"type", "log"}, {"level", level}, {"message", text}});
  }
  void flush_() override {}

 private:
  Channel& channel_;
};

int fail(int status, const std::string& message) {
  std::fprintf(stderr, "plugboard-host: %s\n", message.c_str());
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0) {
    std::printf("usage: plugboard-host PLUGIN.so [--config JSON]\n"
                "Serves one plugin over the out-of-process protocol on stdin/stdout.\n");
    return argc < 2 ? 2 : 0;
  }
  Json config = Json::object();
  if (argc >= 4 && std::strcmp(argv[2], "--config") == 0) {
    config = Json::parse(argv[3], nullptr, false);
    if (!config.is_object()) return fail(2, "--config must be a JSON object");
  }
  // The protocol keeps the real stdout; everything else written to stdout goes to stderr.
  const int protocol_fd = ::dup(STDOUT_FILENO);
  if (protocol_fd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return fail(2, "cannot set up stdout");
  Channel channel(protocol_fd);
  auto logger = std::make_shared<spdlog::logger>("plugin", std::make_shared<LogSink>(channel));
  logger->set_level(spdlog::level::debug);
  spdlog::set_default_logger(logger);

  auto library = plugboard::core::PluginLibrary::load(argv[1]);
  if (!library) return fail(3, library.error().message());
  auto made = (*library)->createInstance(config);
  if (!made) return fail(3, made.error().message());
  auto& instance = **made;
  const bool serial = instance.manifest().concurrency == plugboard::core::Concurrency::kSerial;

  std::mutex mu;
  std::condition_variable cv;
  std::map<std::uint64_t, bool> running;  // id -> cancel asked
  std::mutex serial_mu;
  bool greeted = false;

  auto execute = [&](std::uint64_t id, Json request) {
    Json result;
    {
      std::unique_lock<std::mutex> one_at_a_time;
      if (serial) one_at_a_time = std::unique_lock(serial_mu);
      bool cancelled;
      {
        std::lock_guard lock(mu);
        cancelled = running[id];
      }
      result = cancelled ? Json{{"phase", "Error"}, {"message", "cancelled before it started"}}
                         : instance.call(request, id).toJson();
    }
    channel.send({{"type", "result"}, {"id", id}, {"result", result}});
    std::lock_guard lock(mu);
    running.erase(id);
    cv.notify_all();
  };

  // Cancellation may arrive before the plugin has registered the call; repeat it until
  // the call ends.
  std::atomic<bool> done{false};
  std::thread canceller([&] {
    std::unique_lock lock(mu);
    while (!done) {
      cv.wait_for(lock, std::chrono::milliseconds(20));
      for (const auto& [id, cancel] : running) {
        if (cancel) instance.cancel(id);
      }
    }
  });

  plugboard::core::FrameReader reader;
  std::vector<std::string> lines;
  char buf[65536];
  int status = 0;
  bool stop = false;
  while (!stop) {
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of input: like shutdown
    lines.clear();
    if (auto st = reader.feed(std::string_view(buf, static_cast<std::size_t>(n)), lines); !st) {
      status = fail(2, st.error().message());
      break;
    }
    for (const auto& line : lines) {
      auto message = plugboard::core::parseFrame(line, plugboard::core::Sender::kRuntime);
      if (!message) {
        status = fail(2, message.error().message());
        stop = true;
        break;
      }
      const std::string type = (*message)["type"];
      if (type == "hello") {
        bool offered = false;
        for (const auto& v : (*message)["protocols"]) offered = offered || v == plugboard::core::kProtocolVersion;
        if (!offered) {
          status = fail(2, "the runtime offers protocols " + (*message)["protocols"].dump() + "; this host speaks 1");
          stop = true;
          break;
        }
        channel.send({{"type", "hello"}, {"protocol", plugboard::core::kProtocolVersion},
                      {"manifest", Json::parse(instance.manifest().text)}});
        greeted = true;
      } else if (!greeted) {
        status = fail(2, "'" + type + "' before 'hello'");
        stop = true;
        break;
      } else if (type == "execute") {
        const std::uint64_t id = (*message)["id"];
        {
          std::lock_guard lock(mu);
          running.emplace(id, false);
        }
        std::thread(execute, id, std::move((*message)["request"])).detach();
      } else if (type == "cancel") {
        const std::uint64_t id = (*message)["id"];
        std::lock_guard lock(mu);
        if (auto it = running.find(id); it != running.end()) it->second = true;
        cv.notify_all();
      } else if (type == "shutdown") {
        stop = true;
        break;
      }
    }
  }
  // Let the calls in flight answer, then go.
  {
    std::unique_lock lock(mu);
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return running.empty(); });
    done = true;
    cv.notify_all();
  }
  canceller.join();
  std::fflush(stdout);
  std::_Exit(status);  // calls that did not answer still run plugin code
}

// plugboard-host: runs one native plugin .so in its own process and serves it over the
// out-of-process protocol v1 (docs/protocol.md) on stdin and stdout, so that a plugin that
// crashes, hangs or scribbles on memory takes only this process down.
//
//   plugboard-host PLUGIN.so [--config JSON] [--threads N]
//
// The plugin's own writes to stdout go to stderr: the protocol has a private copy of the
// original stdout. The plugin's log lines become `log` messages. No frame it sends exceeds
// the frame limit the runtime's hello gives: a larger result becomes an Error for that call
// alone, a longer log line is cut. A call during which an allocation failed (operator new)
// is answered with "out_of_memory" so that the runtime replaces this process. Exit status:
// 0 after `shutdown` or end of input, 2 for a protocol error or bad arguments, 3 when the
// plugin cannot be loaded. Built on the host kit alone (plugboard/host/*.h), as a third
// party's host could be.
//
// Threads (one model): main's thread loads the plugin and then becomes the I/O thread
// (HostLoop, host_loop.h): it alone reads and writes the channel (Channel, channel.h). The
// plugin's calls run on one bounded pool (CallPool, call_pool.h), which main owns; results
// come back to the I/O thread through the CallTable (calls.h). No other thread is started.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include <plugboard/host/native.h>
#include <plugboard/host/protocol.h>

#include "allocation.h"
#include "call_pool.h"
#include "calls.h"
#include "channel.h"
#include "host_loop.h"

namespace {

namespace host = plugboard::host;
namespace tool = plugboard::host_tool;
using host::Json;

// The most calls run at once unless --threads says otherwise (one for a serial plugin).
constexpr std::size_t kDefaultThreads = 256;

const char kUsage[] =
    "usage: plugboard-host PLUGIN.so [--config JSON] [--threads N]\n"
    "Serves one plugin over the out-of-process protocol on stdin/stdout, or on the\n"
    "descriptors PLUGBOARD_PROTOCOL_FDS=IN,OUT names (docs/protocol.md). --config gives the\n"
    "plugin's configuration (a JSON object); --threads the most calls it runs at once\n"
    "(default 256; one when its manifest says \"concurrency\":\"serial\"), further calls\n"
    "waiting their turn.\n";

using tool::fail;

struct Arguments {
  std::string plugin;
  Json config = Json::object();
  std::size_t threads = kDefaultThreads;
};

// The arguments after PLUGIN.so, or the exit status for bad ones.
std::optional<int> readArguments(int argc, char** argv, Arguments& args) {
  args.plugin = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--config") {
      args.config = Json::parse(value, nullptr, false);
      if (!args.config.is_object()) return fail(2, "--config must be a JSON object");
    } else if (flag == "--threads") {
      char* end = nullptr;
      const unsigned long n = std::strtoul(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || n < 1 || n > 100000) {
        return fail(2, "--threads must be a number from 1 to 100000, not '" + value + "'");
      }
      args.threads = n;
    }
  }
  return std::nullopt;
}

// The channel's descriptors {input, output}: stdin and a private copy of stdout, or the
// two PLUGBOARD_PROTOCOL_FDS names. Everything else written to stdout goes to stderr.
std::optional<std::pair<int, int>> setUpDescriptors() {
  int input_fd = STDIN_FILENO, protocol_fd = -1;
  if (const char* fds = std::getenv(host::kProtocolFdsVariable); fds != nullptr) {
    // The channel on two inherited descriptors (a container engine passes them through):
    // kept from what the plugin starts, as is the variable.
    if (std::sscanf(fds, "%d,%d", &input_fd, &protocol_fd) != 2 || input_fd < 0 || protocol_fd < 0 ||
        ::fcntl(input_fd, F_SETFD, FD_CLOEXEC) != 0 || ::fcntl(protocol_fd, F_SETFD, FD_CLOEXEC) != 0) {
      fail(2, std::string(host::kProtocolFdsVariable) + "='" + fds + "' does not name two open descriptors");
      return std::nullopt;
    }
    ::unsetenv(host::kProtocolFdsVariable);
  } else {
    // The protocol keeps the real stdout, not inherited by what the plugin starts.
    protocol_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (protocol_fd < 0) {
      fail(2, "cannot set up stdout");
      return std::nullopt;
    }
  }
  if (::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    fail(2, "cannot set up stdout");
    return std::nullopt;
  }
  return std::make_pair(input_fd, protocol_fd);
}

// Loads the plugin and makes its instance, whose log lines go to `channel`; or the exit
// status after saying why not.
std::optional<int> loadPlugin(const Arguments& args, tool::Channel& channel, tool::Plugin& plugin) {
  auto library = host::NativeLibrary::load(args.plugin);
  if (!library) return fail(3, library.error().message());
  plugin.library = *library;
  plugin.name = plugin.library->name();
  plugin.manifest = Json::parse(plugin.library->manifestText(), nullptr, false);
  if (!plugin.manifest.is_object()) return fail(3, "plugin '" + plugin.name + "': its manifest is not a JSON object");
  plugin.serial = plugin.manifest.value("concurrency", "") == "serial";
  auto made = plugin.library->createInstance(
      args.config.dump(),
      [&channel](int level, std::string_view text) {
        channel.post(channel.logFrame(level, text, tool::callOnThisThread()));
      });
  if (!made) return fail(3, made.error().message());
  plugin.instance = std::move(*made);
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0) {
    std::fputs(kUsage, stdout);
    return argc < 2 ? 2 : 0;
  }
  Arguments args;
  if (auto bad = readArguments(argc, argv, args)) return *bad;
  const auto fds = setUpDescriptors();
  if (!fds) return 2;
  const std::unique_ptr<tool::Channel> channel = tool::Channel::open(fds->first, fds->second);
  if (!channel) return fail(2, "cannot make the channel's wake-up descriptor");
  tool::watchAllocations();

  tool::Plugin plugin;
  if (auto failed = loadPlugin(args, *channel, plugin)) return *failed;
  // Never destroyed: see below.
  tool::CallPool* pool;
  try {
    pool = new tool::CallPool(plugin.serial ? 1 : args.threads);
  } catch (const std::system_error& e) {
    return fail(2, std::string("cannot start a thread for the plugin's calls: ") + e.what());
  }
  tool::HostLoop loop(plugin, *channel, *pool);
  const int status = loop.run();
  std::fflush(stdout);
  std::_Exit(status);  // calls that did not answer still run plugin code on the pool
}

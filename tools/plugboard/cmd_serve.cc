// plugboard serve: Argo's executor-plugin HTTP protocol and the runtime's own endpoints.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <spdlog/spdlog.h>

#include "core/runtime/exports.h"
#include "tools/plugboard/cli.h"
#include "tools/plugboard/commands.h"

namespace plugboard::cli {
namespace po = boost::program_options;

CommandOptions serveOptions() {
  CommandOptions command{po::options_description("serve options")};
  auto& options = command.options;
  addPluginDirsOption(options);
  addPriorityOption(options);
  namespace defaults = core::defaults;
  options.add_options()("listen", po::value<std::string>(),
                        configHelp("host:port to listen on; port 0 picks a free one", "listen",
                                   defaultText(defaults::kListen))
                            .c_str())(
      "token-file", po::value<std::string>()->value_name("FILE"),
      "file holding the bearer token clients must send (Argo: /var/run/argo/token)")(
      "timeout", po::value<std::string>(),
      configHelp("deadline of a call", "default_timeout", defaultText(defaults::kTimeout)).c_str())(
      "poll-interval", po::value<std::string>(),
      configHelp("requeue delay for Running without one", "poll_interval",
                 defaultText(defaults::kPollInterval))
          .c_str())("reply-deadline", po::value<std::string>(),
                    configHelp("answer an Argo request still running after this Running, "
                               "requeued; the call goes on",
                               "reply_deadline", defaultText(defaults::kReplyDeadline))
                        .c_str())("grace-period", po::value<std::string>(),
                                  configHelp("at SIGTERM, how long calls may finish",
                                             "grace_period", defaultText(defaults::kGracePeriod))
                                      .c_str())(
      "idle-timeout", po::value<std::string>(),
      ("close a connection idle this long (default " + defaultText(defaults::kIdleTimeout) + ")")
          .c_str())("no-watch", configHelp("do not watch the plugin directories", "watch",
                                           defaultText(defaults::kWatch))
                                    .c_str())(
      "body-limit", po::value<std::size_t>(),
      configHelp("largest request body in bytes", "body_limit", defaultText(defaults::kBodyLimit))
          .c_str())("max-connections", po::value<std::size_t>(),
                    configHelp("connections served at once, beyond them 503; 0 = half the "
                               "descriptor limit, at most 10000",
                               "max_connections", defaultText(defaults::kMaxConnections))
                        .c_str())(
      "workers", po::value<int>(),
      configHelp("I/O threads (calls run on the call pool); 0 = one per core", "workers",
                 defaultText(defaults::kWorkers))
          .c_str())("poll-unknown",
                    configHelp("poll the hosted plugins for a template whose key none has",
                               "poll_unknown", defaultText(defaults::kPollUnknown))
                        .c_str());
  return command;
}

int cmdServe(const Args& args) {
  po::variables_map vm;
  int exit_code = kExitOk;
  if (!parseCommandArgs(args, "serve", vm, exit_code)) return exit_code;
  auto config = settings(vm);
  if (!config) return kExitUsage;
  // The flags are already over the file's values (settings()).
  core::ServerOptions server_options = config->server;
  const std::filesystem::path& token_file = config->token_file;
  if (!token_file.empty()) {
    auto token = core::readTokenFile(token_file);
    if (!token) {
      std::cerr << "plugboard: " << token.error().message() << "\n";
      return kExitUsage;
    }
    server_options.token = *token;
  }

  // Block the signals before any thread starts, so that only sigwait() sees them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  // Connections, plugins and their children all take descriptors: use what the hard limit
  // allows, before any is opened.
  const core::DescriptorLimit nofile = core::raiseDescriptorLimit();
  server_options.max_connections = core::connectionLimit(server_options.max_connections, nofile);
  spdlog::info("open descriptors: up to {}{}; up to {} connections at once", nofile.soft,
               nofile.soft != nofile.before ? " (raised from " + std::to_string(nofile.before) + ")"
                                            : std::string(),
               server_options.max_connections);
  if (server_options.max_connections >= nofile.soft) {
    spdlog::warn(
        "max_connections is {} but only {} descriptors may be open: beyond them connections "
        "wait while accepting pauses",
        server_options.max_connections, nofile.soft);
  }
  // Under a file-size limit (RLIMIT_FSIZE), a write past it raises SIGXFSZ, whose default
  // action ends the process: a plugin copy too large for it must be refused, not kill the
  // server. A handler (unlike SIG_IGN) is reset to the default in the children it starts.
  struct sigaction on_xfsz {};
  on_xfsz.sa_handler = [](int) {};
  sigemptyset(&on_xfsz.sa_mask);
  sigaction(SIGXFSZ, &on_xfsz, nullptr);

  const bool watch = config->watch;
  auto live = core::openLiveRuntime(*config);
  if (!live) {
    std::cerr << "plugboard: " << live.error().message() << "\n";
    return kExitUsage;
  }
  core::LiveRuntime& runtime = **live;
  // The server first: its clock (its pool's) times the watcher's debounce too.
  core::HttpServer server(runtime, server_options);
  if (core::Status st = watch ? runtime.start(server.clock(), config->reload_debounce)
                              : runtime.start();
      !st) {
    std::cerr << "plugboard: " << st.error().message() << "\n";
    return kExitFailed;
  }
  auto bound = server.start();
  if (!bound) {
    runtime.stop();  // before the server's clock goes
    std::cerr << "plugboard: " << bound.error().message() << "\n";
    return kExitFailed;
  }
  const std::size_t count = runtime.current()->catalog().entries().size();
  // Changes are picked up from the plugin directories and from the registry (its file and
  // its artifacts' directories): the line names those there are.
  std::string watching;
  if (watch) {
    if (!config->plugin_dirs.empty() || config->registry.empty()) watching = "the plugin directories";
    if (!config->registry.empty()) {
      watching += std::string(watching.empty() ? "" : " and ") + "the registry's files";
    }
    watching = ", watching " + watching;
  }
  std::printf("plugboard: serving %zu plugins on http://%s%s\n", count, bound->c_str(),
              watching.c_str());
  std::fflush(stdout);
  spdlog::info("listening on {} with {} plugins{}", *bound, count,
               server_options.token.empty() ? "" : ", bearer token required");

  // This thread waits for a signal and for the plugin directories' changes, and applies
  // those (LiveRuntime::takeChanges(): a reload runs here, never on the server's threads).
  const int signals = signalfd(-1, &set, SFD_CLOEXEC);
  int signal = 0;
  if (signals < 0) {
    spdlog::error("cannot wait for signals and changes at once ({}): plugin changes are not "
                  "applied", std::strerror(errno));
    sigwait(&set, &signal);
  }
  while (signal == 0) {
    pollfd fds[2] = {{signals, POLLIN, 0}, {runtime.watchDescriptor(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("waiting for signals: {}", std::strerror(errno));
      sigwait(&set, &signal);
      break;
    }
    if (fds[1].revents & POLLIN) runtime.takeChanges();
    signalfd_siginfo info{};
    if ((fds[0].revents & POLLIN) && ::read(signals, &info, sizeof info) == sizeof info)
      signal = static_cast<int>(info.ssi_signo);
  }
  runtime.stop();  // no reload from here on
  server.drain();  // before saying so: from the line on, new work is refused
  spdlog::warn("{}: shutting down; calls in flight have {} to finish",
               signal == SIGTERM ? "SIGTERM" : "SIGINT",
               core::formatElapsed(server_options.grace_period));
  const int unfinished = server.shutdown();
  std::printf("plugboard: stopped\n");
  std::fflush(stdout);
  if (unfinished > 0) {
    spdlog::error("{} call(s) did not finish within the grace period", unfinished);
    std::_Exit(kExitOk);  // they still run plugin code: end without unloading under them
  }
  return kExitOk;
}

}  // namespace plugboard::cli

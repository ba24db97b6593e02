// core/base/defaults.h: the one place where each default setting of the runtime is written.
//
// The configuration (core/runtime/config.h), the server's and the engine's options, the deadline
// helpers and the CLI's --help texts all take their defaults from here, so changing a
// default is one edit (docs/configuration.md states them for readers, and a test checks
// it against these values). Constants only; safe from any thread.
#ifndef PLUGBOARD_CORE_BASE_DEFAULTS_H_
#define PLUGBOARD_CORE_BASE_DEFAULTS_H_

#include <chrono>
#include <cstddef>
#include <string_view>

#include "core/base/duration.h"

namespace plugboard::core::defaults {

// serve: where it listens (host:port).
inline constexpr std::string_view kListen = "127.0.0.1:7878";
// serve: whether the plugin directories are watched and changes hot-loaded.
inline constexpr bool kWatch = true;
// serve: whether a template whose plugin key no hosted plugin has polls the hosted
// plugins (true) or is answered `{}` at once, leaving it to Argo's other sidecars (false).
inline constexpr bool kPollUnknown = false;
// serve: I/O threads; 0 means one per core the process may use.
inline constexpr int kWorkers = 0;
// serve: plugin calls running at once (the WorkPool's bound); more wait their turn.
inline constexpr int kCallThreads = 64;
// serve: each plugin's bulkhead (core/serving/bulkheads.h): its calls in flight at once, a
// quarter of the call pool, so that up to three plugins that hang leave room for the rest;
// and its calls waiting for one of those, beyond which a call is refused at once.
inline constexpr int kPluginCalls = 16;
inline constexpr int kPluginQueue = 256;
// serve: a call that has run this long has its thread lowered to the lowest priority, so
// that a plugin that spins takes the CPU from the short calls of others only while they
// leave it idle (core/base/work_pool.h).
inline constexpr Millis kLowerCallsAfter = std::chrono::seconds(1);
// Deadline of a call (exec, serve) or a step attempt (run) that sets none.
inline constexpr Millis kTimeout = std::chrono::minutes(5);
// Requeue delay for a Running result that names none.
inline constexpr Millis kPollInterval = std::chrono::seconds(1);
// serve: at shutdown, how long calls in flight may finish.
inline constexpr Millis kGracePeriod = std::chrono::seconds(30);
// serve: a connection waiting this long for a request is closed.
inline constexpr Millis kIdleTimeout = std::chrono::seconds(60);
// serve: the largest request body, in bytes (a larger one gets 413).
inline constexpr std::size_t kBodyLimit = std::size_t{1} << 20;
// serve: the largest request header block, in bytes (a larger one gets 431).
inline constexpr std::size_t kHeaderLimit = 16 * 1024;
// Logging: the level (trace, debug, info, warn, error, off) and format (text, json).
inline constexpr std::string_view kLogLevel = "warn";
inline constexpr std::string_view kLogFormat = "text";
// run: leaf calls at once for an Engine built without a count (the CLI passes the
// number of cores).
inline constexpr int kParallel = 2;
// run: the deepest nesting of template calls (the entry is 1, a template it calls 2, ...),
// as Argo's controller's maxAllowedStackDepth; a call as deep as this ends the run in
// Error, naming its template.
inline constexpr int kMaxDepth = 100;
// run: the most nodes a run makes (a node per template call, loop item, retry attempt,
// steps group); the call that would make more ends the run in Error, naming its template.
// About 1-2 KB each: a run holds at most a few GB of them.
inline constexpr std::size_t kMaxNodes = 1'000'000;
// run: the attempts of a retried call kept in the run's status (the latest ones; the
// older ones' nodes are reused): a retryStrategy.limit of any size costs at most these.
inline constexpr int kKeptAttempts = 100;
// How long a cancelled call may take to return before it is abandoned.
inline constexpr Millis kCancelGrace = std::chrono::seconds(2);
// Hot-load: quiet time after the last change in a watched directory before reloading.
inline constexpr Millis kReloadDebounce{50};
// serve: how many of the latest reloads the plugin list (and its status page) shows.
inline constexpr std::size_t kRecentReloads = 20;
// serve: the longest an Argo template.execute request is held. A call still running then
// is answered Running (requeued after the poll interval) and goes on; Argo's own client
// gives up after 30 s and sends the request again.
inline constexpr Millis kReplyDeadline = std::chrono::seconds(20);
// serve: how long, and how many, finished template.execute outcomes are kept so that a
// request sent again (after a requeue or a lost reply) gets the same answer.
inline constexpr Millis kKeepOutcomesFor = std::chrono::minutes(10);
inline constexpr std::size_t kKeepOutcomes = 10'000;
// ...and how many bytes of replies at most, all together (the oldest go first), and the
// largest reply kept at all (a larger one is answered and dropped: a request sent again
// runs the call again). Well under the 256 MiB limit of tools/argo/plugin.yaml.
inline constexpr std::size_t kKeepOutcomesBytes = std::size_t{32} << 20;
inline constexpr std::size_t kKeepOutcomeMaxBytes = std::size_t{1} << 20;
// serve: connections served at once; 0 means half the descriptor limit in effect, at most
// kAutoMaxConnections. A connection beyond the limit is answered 503 and closed.
inline constexpr std::size_t kMaxConnections = 0;
inline constexpr std::size_t kAutoMaxConnections = 10'000;
// run: the largest args a step may be called with, in bytes, after its references are
// substituted (a value being spliced that grows past it stops there); the step fails
// naming the limit.
inline constexpr std::size_t kArgsLimit = std::size_t{16} << 20;
// The largest file read whole (a workflow, a configuration, a registry, an args or
// parameter file), in bytes; a larger one is refused, naming the file.
inline constexpr std::size_t kMaxFileBytes = std::size_t{64} << 20;
// The largest token file, in bytes (Argo's token is 32 characters).
inline constexpr std::size_t kMaxTokenBytes = 64 * 1024;
// The system plugin directory, relative to the prefix plugboard is installed under (the
// parent of its bin/): the last place the CLI looks for plugins, after --plugins, the
// config's plugin_dirs and $PLUGBOARD_PLUGINS, and only when it exists. The Debian
// package puts the bundled example plugins there (/usr/lib/plugboard/plugins).
inline constexpr std::string_view kSystemPluginDir = "lib/plugboard/plugins";

}  // namespace plugboard::core::defaults

#endif  // PLUGBOARD_CORE_BASE_DEFAULTS_H_

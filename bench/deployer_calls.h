// bench/deployer_calls.h: what the deployer benchmarks share: the built deployers, plugins
// opened through them, and timing calls to the echo plugin (or its twins) through a handle.
// Every failure ends the benchmark with a message: a number measured on a broken call is
// worthless.
#ifndef PLUGBOARD_BENCH_DEPLOYER_CALLS_H_
#define PLUGBOARD_BENCH_DEPLOYER_CALLS_H_

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.h"
#include "core/launch/deployer.h"
#include "tests/support/paths.h"

namespace plugboard::bench {

// A call to echo with small args, as the runtime sends it.
inline const std::string kEchoRequest =
    R"({"rpc":"template.execute","key":"echo","via":"name","args":{"greeting":"Hello, bench!"}})";

using BenchClock = std::chrono::steady_clock;

inline double micros(BenchClock::time_point a, BenchClock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

inline double millis(BenchClock::time_point a, BenchClock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// The flags of a deployer benchmark: --calls, --rounds and --starts (numbers) and any other
// "--flag value" pair, kept as text.
struct BenchFlags {
  int calls = 0, rounds = 0, starts = 0;
  std::map<std::string, std::string> text;

  std::string get(const std::string& flag, const std::string& otherwise = "") const {
    auto it = text.find(flag);
    return it == text.end() ? otherwise : it->second;
  }
};

// Reads argv's "--flag value" pairs over `defaults`.
inline BenchFlags readFlags(int argc, char** argv, BenchFlags defaults) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--calls")
      defaults.calls = value;
    else if (flag == "--rounds")
      defaults.rounds = value;
    else if (flag == "--starts")
      defaults.starts = value;
    else
      defaults.text[flag] = argv[i + 1];
  }
  return defaults;
}

// `podman run --rm` of `image` running `command`, with the flags the deployers use on this
// kind of machine (runc, cgroupfs, no network, no log, the same ulimits) and `more`.
inline std::vector<std::string> podmanRun(const std::vector<std::string>& more,
                                          const std::string& image,
                                          const std::vector<std::string>& command) {
  std::vector<std::string> argv = {"/usr/bin/podman",
                                   "--runtime",
                                   "runc",
                                   "--cgroup-manager",
                                   "cgroupfs",
                                   "run",
                                   "--rm",
                                   "--network",
                                   "none",
                                   "--pull",
                                   "never",
                                   "--log-driver",
                                   "none",
                                   "--ulimit",
                                   "nofile=1024:1024",
                                   "--ulimit",
                                   "nproc=4096:4096"};
  argv.insert(argv.end(), more.begin(), more.end());
  argv.push_back(image);
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

[[noreturn]] inline void benchFailed(const std::string& why) {
  std::fprintf(stderr, "bench: %s\n", why.c_str());
  std::exit(1);
}

inline void mustSucceed(const core::Outcome& o) {
  if (o.phase != core::Phase::kSucceeded) benchFailed("the call failed: " + o.message);
}

// `calls` timings of `call`, in µs. With a `gap`, each call is made that long after the
// last one ended (not timed): the server has gone back to waiting for a request, as it
// has between the steps of a workflow, instead of meeting the next request while it
// still finishes the last one.
inline Stats timeCalls(int calls, const std::function<void()>& call,
                       std::chrono::microseconds gap = std::chrono::microseconds(0)) {
  std::vector<double> samples;
  samples.reserve(calls);
  for (int i = 0; i < calls; ++i) {
    if (gap.count() > 0) std::this_thread::sleep_for(gap);
    const auto start = BenchClock::now();
    call();
    samples.push_back(micros(start, BenchClock::now()));
  }
  return statsOf(std::move(samples));
}

// `calls` calls of kEchoRequest through `handle`, in µs.
inline Stats timeEchoCalls(core::PluginHandle& handle, int calls) {
  return timeCalls(calls, [&] { mustSucceed(handle.callText(kEchoRequest, handle.newCallId())); });
}

// The deployers of this build, as `plugboard` finds them.
class BuiltDeployers {
 public:
  BuiltDeployers() : set_(core::Catalog::scan({testing::deployerDir()}, {}, "deployer"), {}) {}

  std::unique_ptr<core::PluginHandle> open(const std::string& deployer, const core::Json& artifact,
                                           const core::Json& options = core::Json::object()) {
    const core::CatalogEntry* entry = set_.find(deployer);
    if (entry == nullptr) benchFailed("no deployer " + deployer);
    auto module = set_.module(*entry);
    if (!module) benchFailed(module.error().message());
    auto handle = (*module)->open(artifact, options);
    if (!handle) benchFailed(handle.error().message());
    return std::move(*handle);
  }

 private:
  core::DeployerSet set_;
};

}  // namespace plugboard::bench

#endif  // PLUGBOARD_BENCH_DEPLOYER_CALLS_H_

// child_limits_bench: what the process deployer's limits on a child cost per call, side by
// side in one run: the echo plugin through `process` with no limits, with its descriptors
// and threads counted (restart_at_open_files and restart_at_threads set too high to be
// reached: the counting alone), and with the child replaced every 1,000 calls
// (restart_after_calls). Also the cost of one count of each from /proc.
//
//   build/bench/child_limits_bench [--calls 20000] [--rounds 3]
//
// Prints markdown tables: median, mean and p99 per call in µs, and each median and mean
// over the unlimited row's of the same round.
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "bench/bench_support.h"
#include "bench/deployer_calls.h"
#include "deployers/common/usage.h"
#include "tests/support/paths.h"

namespace {

namespace bench = plugboard::bench;
using plugboard::core::Json;

struct Timing {
  bench::Stats stats;
  double mean = 0;
};

Timing timeCalls(plugboard::core::PluginHandle& handle, int calls) {
  std::vector<double> samples;
  samples.reserve(calls);
  for (int i = 0; i < calls; ++i) {
    const auto start = bench::BenchClock::now();
    bench::mustSucceed(handle.callText(bench::kEchoRequest, handle.newCallId()));
    samples.push_back(bench::micros(start, bench::BenchClock::now()));
  }
  const double mean = std::accumulate(samples.begin(), samples.end(), 0.0) / samples.size();
  return {bench::statsOf(std::move(samples)), mean};
}

// µs per call of `count`, over `n` calls.
template <typename F>
double perCall(int n, F count) {
  const auto start = bench::BenchClock::now();
  std::uint64_t sum = 0;
  for (int i = 0; i < n; ++i) sum += count();
  if (sum == 0) bench::benchFailed("counted nothing");
  return bench::micros(start, bench::BenchClock::now()) / n;
}

std::uint64_t readdirCount(const char* dir) {
  DIR* d = ::opendir(dir);
  std::uint64_t n = 0;
  while (const dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
  ::closedir(d);
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 20000, rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--calls") calls = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--rounds") rounds = std::atoi(argv[i + 1]);
  }
  spdlog::set_level(spdlog::level::warn);  // not a line per replaced child
  bench::BuiltDeployers deployers;
  const Json echo = {{"path", plugboard::testing::plugin("echo").string()}};
  auto plain = deployers.open("process", echo);
  auto counted = deployers.open(
      "process", echo, {{"restart_at_open_files", 1000000}, {"restart_at_threads", 1000000}});
  auto replaced = deployers.open("process", echo, {{"restart_after_calls", 1000}});
  for (auto* h : {plain.get(), counted.get(), replaced.get()}) timeCalls(*h, 1000);  // warm up

  std::printf("One count from /proc/<pid>/ of this process (%d counts each)\n\n", calls);
  std::printf("| what | µs |\n|---|---:|\n");
  const pid_t self = ::getpid();
  std::printf("| descriptors: stat() of /proc/<pid>/fd (Linux 6.2+) | %.2f |\n",
              perCall(calls, [&] { return *plugboard::deployer_common::openDescriptors(self); }));
  std::printf("| threads: stat() of /proc/<pid>/task | %.2f |\n",
              perCall(calls, [&] { return *plugboard::deployer_common::threadCount(self); }));
  std::printf("| descriptors by reading /proc/<pid>/fd (older kernels) | %.2f |\n\n",
              perCall(calls, [] { return readdirCount("/proc/self/fd"); }));

  std::printf("Round trip of one call to echo through `process` (%d calls per row)\n\n", calls);
  std::printf(
      "| round | child's limits | median µs | mean µs | p99 µs | median / none | mean / none "
      "|\n|---:|---|---:|---:|---:|---:|---:|\n");
  for (int r = 1; r <= rounds; ++r) {
    const Timing none = timeCalls(*plain, calls);
    const Timing count = timeCalls(*counted, calls);
    const Timing every = timeCalls(*replaced, calls);
    const auto row = [&](const char* what, const Timing& t) {
      std::printf("| %d | %s | %.1f | %.1f | %.1f | %.2fx | %.2fx |\n", r, what, t.stats.median,
                  t.mean, t.stats.p99, t.stats.median / none.stats.median, t.mean / none.mean);
    };
    row("none", none);
    row("`restart_at_open_files`, `restart_at_threads` (counted, never reached)", count);
    row("`restart_after_calls = 1000` (a new child every 1,000 calls)", every);
    std::fflush(stdout);
  }
  return 0;
}

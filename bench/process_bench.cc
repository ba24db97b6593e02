// process_bench: the round trip of one call through the `process` deployer, next to the
// same call in-process (the `native` deployer) and to the floor of any out-of-process
// call: a raw pipe ping-pong of the same message sizes between two processes.
//
//   build/bench/process_bench [--calls 20000] [--rounds 3] [--other-host PATH]
//
// Each round measures the three in turn (interleaved, since the machine is shared), with
// small args to the echo plugin. Prints a markdown table: median and p99 in µs, and the
// ratio of each median to the pipe floor's (a blocking ping-pong). A second floor row
// waits by yielding, as the process deployer's callers do at first. A second table gives
// the throughput of one child with 1, 4 and 16 callers at once (calls per second, the
// median of the rounds). With --other-host, every `process` row is measured a second time
// with that plugboard-host (e.g. one built from another commit), in the same run.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.h"
#include "bench/deployer_calls.h"
#include "bench/pipe_floor.h"
#include "tests/support/paths.h"

namespace {

using plugboard::bench::kEchoRequest;
using plugboard::bench::Stats;
using plugboard::bench::timeEchoCalls;
using plugboard::bench::timePipeFloor;

// Calls per second through `handle` with `callers` threads making `calls` calls in all.
double throughput(plugboard::core::PluginHandle& handle, int callers, int calls) {
  using plugboard::bench::BenchClock;
  const auto start = BenchClock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < callers; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < calls / callers; ++i) {
        plugboard::bench::mustSucceed(handle.callText(kEchoRequest, handle.newCallId()));
      }
    });
  }
  for (auto& t : threads) t.join();
  return (calls / callers) * callers / std::chrono::duration<double>(BenchClock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 20000, rounds = 3;
  std::string other_host;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--calls") calls = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--rounds") rounds = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--other-host") other_host = argv[i + 1];
  }
  plugboard::bench::BuiltDeployers deployers;
  const plugboard::core::Json echo = {{"path", plugboard::testing::plugin("echo").string()}};
  auto open = [&](const char* deployer) { return deployers.open(deployer, echo); };
  auto native = open("native");
  auto process = open("process");
  std::unique_ptr<plugboard::core::PluginHandle> other;
  if (!other_host.empty()) {
    other = deployers.open("process", echo, {{"host", other_host}});
    timeEchoCalls(*other, 1000);  // warm up
  }
  // The floor moves the same bytes as the process deployer's frames for this call.
  const std::string request = R"({"type":"execute","id":1,"request":)" + kEchoRequest + "}\n";
  const std::string reply =
      R"({"type":"result","id":1,"result":{"phase":"Succeeded","outputs":{"parameters":{"greeting":"Hello, bench!"}}}})"
      "\n";
  timeEchoCalls(*process, 1000);  // warm up
  std::fflush(stdout);
  std::printf("Round trip of one call to echo with small args (%d calls per row)\n\n", calls);
  std::printf("| round | what | median µs | p99 µs | median / pipe floor |\n|---:|---|---:|---:|---:|\n");
  for (int r = 1; r <= rounds; ++r) {
    const Stats floor = timePipeFloor(calls, request, reply, false);
    const Stats yielding = timePipeFloor(calls, request, reply, true);
    const Stats out = timeEchoCalls(*process, calls);
    const Stats in = timeEchoCalls(*native, calls);
    std::printf("| %d | pipe ping-pong between two processes (floor) | %.1f | %.1f | 1.00x |\n", r, floor.median,
                floor.p99);
    std::printf("| %d | pipe ping-pong, the parent yielding while it waits | %.1f | %.1f | %.2fx |\n", r,
                yielding.median, yielding.p99, yielding.median / floor.median);
    std::printf("| %d | `process` deployer (plugboard-host child) | %.1f | %.1f | %.2fx |\n", r, out.median, out.p99,
                out.median / floor.median);
    if (other) {
      const Stats o = timeEchoCalls(*other, calls);
      std::printf("| %d | `process` deployer, %s | %.1f | %.1f | %.2fx |\n", r, other_host.c_str(), o.median,
                  o.p99, o.median / floor.median);
    }
    std::printf("| %d | `native` deployer (in-process) | %.1f | %.1f | %.2fx |\n", r, in.median, in.p99,
                in.median / floor.median);
    std::fflush(stdout);
  }
  std::printf("\nThroughput of one `process` child, %d calls per measurement, median of %d rounds\n\n", calls,
              rounds);
  std::printf("| callers at once | this plugboard-host, calls/s |%s\n|---:|---:|%s\n",
              other ? (" " + other_host + ", calls/s |").c_str() : "", other ? "---:|" : "");
  for (const int callers : {1, 4, 16}) {
    std::vector<double> mine, theirs;
    for (int r = 0; r < rounds; ++r) {
      mine.push_back(throughput(*process, callers, calls));
      if (other) theirs.push_back(throughput(*other, callers, calls));
    }
    if (other) {
      std::printf("| %d | %.0f | %.0f |\n", callers, median(mine), median(theirs));
    } else {
      std::printf("| %d | %.0f |\n", callers, median(mine));
    }
    std::fflush(stdout);
  }
  return 0;
}

// process_bench: the round trip of one call through the `process` deployer, next to the
// same call in-process (the `native` deployer) and to the floor of any out-of-process
// call: a raw pipe ping-pong of the same message sizes between two processes.
//
//   build/bench/process_bench [--calls 20000] [--rounds 3]
//
// Each round measures the three in turn (interleaved, since the machine is shared), with
// small args to the echo plugin. Prints a markdown table: median and p99 in µs, and the
// ratio of each median to the pipe floor's (a blocking ping-pong). A second floor row
// waits by yielding, as the process deployer's callers do at first.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
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

}  // namespace

int main(int argc, char** argv) {
  int calls = 20000, rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--calls") calls = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--rounds") rounds = std::atoi(argv[i + 1]);
  }
  plugboard::bench::BuiltDeployers deployers;
  const plugboard::core::Json echo = {{"path", plugboard::testing::plugin("echo").string()}};
  auto open = [&](const char* deployer) { return deployers.open(deployer, echo); };
  auto native = open("native");
  auto process = open("process");
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
    std::printf("| %d | `native` deployer (in-process) | %.1f | %.1f | %.2fx |\n", r, in.median, in.p99,
                in.median / floor.median);
    std::fflush(stdout);
  }
  return 0;
}

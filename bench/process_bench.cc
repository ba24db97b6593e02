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
#include "bench/pipe_floor.h"
#include "core/deployer.h"
#include "tests/support/paths.h"

namespace {

using plugboard::bench::Stats;
using plugboard::bench::statsOf;
using plugboard::bench::timePipeFloor;
using Clock = std::chrono::steady_clock;
namespace core = plugboard::core;

const std::string kRequest =
    R"({"rpc":"template.execute","key":"echo","via":"name","args":{"greeting":"Hello, bench!"}})";

double micros(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

Stats timeHandle(core::PluginHandle& handle, int calls) {
  std::vector<double> samples;
  samples.reserve(calls);
  for (int i = 0; i < calls; ++i) {
    const auto start = Clock::now();
    core::Outcome o = handle.callText(kRequest, handle.newCallId());
    samples.push_back(micros(start, Clock::now()));
    if (o.phase != core::Phase::kSucceeded) {
      std::fprintf(stderr, "process_bench: the call failed: %s\n", o.message.c_str());
      std::exit(1);
    }
  }
  return statsOf(std::move(samples));
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 20000, rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--calls") calls = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--rounds") rounds = std::atoi(argv[i + 1]);
  }
  core::DeployerSet deployers(core::Catalog::scan({plugboard::testing::deployerDir()}, {}, "deployer"), {});
  auto open = [&](const char* deployer) {
    const core::CatalogEntry* entry = deployers.find(deployer);
    auto module = entry ? deployers.module(*entry) : core::Expected<std::shared_ptr<core::DeployerModule>>(
                                                         core::Error(std::string("no deployer ") + deployer));
    if (!module) {
      std::fprintf(stderr, "process_bench: %s\n", module.error().message().c_str());
      std::exit(1);
    }
    auto handle = (*module)->open({{"path", plugboard::testing::plugin("echo").string()}});
    if (!handle) {
      std::fprintf(stderr, "process_bench: %s\n", handle.error().message().c_str());
      std::exit(1);
    }
    return std::move(*handle);
  };
  auto native = open("native");
  auto process = open("process");
  // The floor moves the same bytes as the process deployer's frames for this call.
  const std::string request = R"({"type":"execute","id":1,"request":)" + kRequest + "}\n";
  const std::string reply =
      R"({"type":"result","id":1,"result":{"phase":"Succeeded","outputs":{"parameters":{"greeting":"Hello, bench!"}}}})"
      "\n";
  timeHandle(*process, 1000);  // warm up
  std::fflush(stdout);
  std::printf("Round trip of one call to echo with small args (%d calls per row)\n\n", calls);
  std::printf("| round | what | median µs | p99 µs | median / pipe floor |\n|---:|---|---:|---:|---:|\n");
  for (int r = 1; r <= rounds; ++r) {
    const Stats floor = timePipeFloor(calls, request, reply, false);
    const Stats yielding = timePipeFloor(calls, request, reply, true);
    const Stats out = timeHandle(*process, calls);
    const Stats in = timeHandle(*native, calls);
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

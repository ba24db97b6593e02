// container_bench: the container deployer's cold start (podman starting the container to
// the plugin's first result) next to `podman run --rm IMAGE true` with the same flags, and
// its warm per-call round trip next to the `process` deployer's, for the echo plugin.
//
//   build/bench/container_bench [--calls 20000] [--rounds 3] [--starts 10]
//
// It first makes the image localhost/plugboard-bench/echo:latest with tools/plugin-image.sh
// (with /usr/bin/true in it). Rows are interleaved (the machine is shared).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "bench/bench_support.h"
#include "bench/deployer_calls.h"
#include "plugboard/host/spawn.h"
#include "tests/support/paths.h"

namespace {

using plugboard::bench::BenchClock;
using plugboard::bench::benchFailed;
using plugboard::bench::kEchoRequest;
using plugboard::bench::millis;
using plugboard::bench::mustSucceed;
using plugboard::bench::Stats;
using plugboard::bench::statsOf;
using plugboard::bench::timeEchoCalls;
namespace core = plugboard::core;

const char* const kImage = "localhost/plugboard-bench/echo:latest";

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  const auto flags = plugboard::bench::readFlags(argc, argv, {20000, 3, 10, {}});
  const int calls = flags.calls, rounds = flags.rounds, starts = flags.starts;
  const std::string make = (plugboard::testing::sourceDir() / "tools/plugin-image.sh").string() +
                           " " + plugboard::testing::plugin("echo").string() + " " + kImage +
                           " --host " +
                           (plugboard::testing::buildDir() / "plugboard-host").string() +
                           " --add /usr/bin/true >/dev/null";
  if (std::system(make.c_str()) != 0) benchFailed("could not make the image: " + make);

  plugboard::bench::BuiltDeployers deployers;
  auto open = [&](const char* deployer, const core::Json& artifact) {
    return deployers.open(deployer, artifact);
  };
  const core::Json image = {{"image", kImage}};
  const core::Json so = {{"path", plugboard::testing::plugin("echo").string()}};
  const std::vector<std::string> podman_true =
      plugboard::bench::podmanRun({"--init"}, kImage, {"/usr/bin/true"});

  std::vector<double> podman_start, cold_start, cold_whole, process_start;
  for (int i = 0; i < starts; ++i) {
    auto t0 = BenchClock::now();
    if (plugboard::host::runToEnd(podman_true, std::chrono::seconds(60)) != 0)
      benchFailed("podman run ... true failed");
    podman_start.push_back(millis(t0, BenchClock::now()));
    t0 = BenchClock::now();
    {
      auto h = open("container", image);
      mustSucceed(h->callText(kEchoRequest, h->newCallId()));
      cold_start.push_back(millis(t0, BenchClock::now()));
    }
    cold_whole.push_back(millis(t0, BenchClock::now()));  // the container stopped and removed
    t0 = BenchClock::now();
    {
      auto h = open("process", so);
      mustSucceed(h->callText(kEchoRequest, h->newCallId()));
      process_start.push_back(millis(t0, BenchClock::now()));
    }
  }
  const Stats p = statsOf(podman_start), c = statsOf(cold_start), w = statsOf(cold_whole),
              q = statsOf(process_start);
  std::printf("Cold start, ms (%d each, interleaved)\n\n", starts);
  std::printf("| what | median ms | min ms | max ms |\n|---|---:|---:|---:|\n");
  std::printf("| `podman run --rm IMAGE true` (same flags) | %.1f | %.1f | %.1f |\n", p.median,
              p.min, p.max);
  std::printf("| `container` deployer: open to first result | %.1f | %.1f | %.1f |\n", c.median,
              c.min, c.max);
  std::printf(
      "| `container` deployer: open, first result, close (container removed) | %.1f | %.1f | %.1f "
      "|\n",
      w.median, w.min, w.max);
  std::printf("| `process` deployer: open to first result | %.1f | %.1f | %.1f |\n", q.median,
              q.min, q.max);
  std::printf(
      "\ncontainer deployer over podman's own run, medians: to first result %+.1f ms, whole %+.1f "
      "ms\n",
      c.median - p.median, w.median - p.median);

  auto boxed = open("container", image);
  auto child = open("process", so);
  timeEchoCalls(*boxed, 1000);  // warm up
  timeEchoCalls(*child, 1000);
  std::printf("\nWarm round trip of one call to echo with small args (%d calls per row)\n\n",
              calls);
  std::printf(
      "| round | what | median µs | p99 µs | median / process |\n|---:|---|---:|---:|---:|\n");
  for (int r = 1; r <= rounds; ++r) {
    const Stats proc = timeEchoCalls(*child, calls);
    const Stats box = timeEchoCalls(*boxed, calls);
    std::printf("| %d | `process` deployer | %.1f | %.1f | 1.00x |\n", r, proc.median, proc.p99);
    std::printf("| %d | `container` deployer | %.1f | %.1f | %.2fx |\n", r, box.median, box.p99,
                box.median / proc.median);
    std::fflush(stdout);
  }
  return 0;
}

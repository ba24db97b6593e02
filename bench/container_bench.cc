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
#include "core/deployer.h"
#include "deployers/process/spawn.h"
#include "tests/support/paths.h"

namespace {

using plugboard::bench::Stats;
using plugboard::bench::statsOf;
using Clock = std::chrono::steady_clock;
namespace core = plugboard::core;

const char* const kImage = "localhost/plugboard-bench/echo:latest";
const std::string kRequest =
    R"({"rpc":"template.execute","key":"echo","via":"name","args":{"greeting":"Hello, bench!"}})";

double millis(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "container_bench: %s\n", why.c_str());
  std::exit(1);
}

void mustSucceed(const core::Outcome& o) {
  if (o.phase != core::Phase::kSucceeded) fail("the call failed: " + o.message);
}

Stats timeHandle(core::PluginHandle& handle, int calls) {
  std::vector<double> samples;
  samples.reserve(calls);
  for (int i = 0; i < calls; ++i) {
    const auto start = Clock::now();
    mustSucceed(handle.callText(kRequest, handle.newCallId()));
    samples.push_back(millis(start, Clock::now()) * 1000.0);
  }
  return statsOf(std::move(samples));
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  int calls = 20000, rounds = 3, starts = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--calls") calls = value;
    if (flag == "--rounds") rounds = value;
    if (flag == "--starts") starts = value;
  }
  const std::string make = (plugboard::testing::sourceDir() / "tools/plugin-image.sh").string() +
                           " " + plugboard::testing::plugin("echo").string() + " " + kImage +
                           " --host " +
                           (plugboard::testing::buildDir() / "plugboard-host").string() +
                           " --add /usr/bin/true >/dev/null";
  if (std::system(make.c_str()) != 0) fail("could not make the image: " + make);

  core::DeployerSet deployers(
      core::Catalog::scan({plugboard::testing::deployerDir()}, {}, "deployer"), {});
  auto open = [&](const char* deployer, const core::Json& artifact) {
    const core::CatalogEntry* entry = deployers.find(deployer);
    if (entry == nullptr) fail(std::string("no deployer ") + deployer);
    auto module = deployers.module(*entry);
    if (!module) fail(module.error().message());
    auto handle = (*module)->open(artifact, core::Json::object());
    if (!handle) fail(handle.error().message());
    return std::move(*handle);
  };
  const core::Json image = {{"image", kImage}};
  const core::Json so = {{"path", plugboard::testing::plugin("echo").string()}};
  const std::vector<std::string> podman_true = {"/usr/bin/podman",
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
                                                "--init",
                                                "--ulimit",
                                                "nofile=1024:1024",
                                                "--ulimit",
                                                "nproc=4096:4096",
                                                kImage,
                                                "/usr/bin/true"};

  std::vector<double> podman_start, cold_start, cold_whole, process_start;
  for (int i = 0; i < starts; ++i) {
    auto t0 = Clock::now();
    if (plugboard::process_deployer::runToEnd(podman_true, std::chrono::seconds(60)) != 0)
      fail("podman run ... true failed");
    podman_start.push_back(millis(t0, Clock::now()));
    t0 = Clock::now();
    {
      auto h = open("container", image);
      mustSucceed(h->callText(kRequest, h->newCallId()));
      cold_start.push_back(millis(t0, Clock::now()));
    }
    cold_whole.push_back(millis(t0, Clock::now()));  // the container stopped and removed
    t0 = Clock::now();
    {
      auto h = open("process", so);
      mustSucceed(h->callText(kRequest, h->newCallId()));
      process_start.push_back(millis(t0, Clock::now()));
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
  timeHandle(*boxed, 1000);  // warm up
  timeHandle(*child, 1000);
  std::printf("\nWarm round trip of one call to echo with small args (%d calls per row)\n\n",
              calls);
  std::printf(
      "| round | what | median µs | p99 µs | median / process |\n|---:|---|---:|---:|---:|\n");
  for (int r = 1; r <= rounds; ++r) {
    const Stats proc = timeHandle(*child, calls);
    const Stats box = timeHandle(*boxed, calls);
    std::printf("| %d | `process` deployer | %.1f | %.1f | 1.00x |\n", r, proc.median, proc.p99);
    std::printf("| %d | `container` deployer | %.1f | %.1f | %.2fx |\n", r, box.median, box.p99,
                box.median / proc.median);
    std::fflush(stdout);
  }
  return 0;
}

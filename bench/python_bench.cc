// python_bench: the per-call overhead of one trivial Python function (bench/pyecho.py,
// its args back) through the python deployer in both modes, next to the same function in
// C++ in-process (the echo plugin through the `native` deployer), the Argo-style Python
// http.server sidecar (bench/sidecar.py) and the raw pipe ping-pong floor; then the
// start-up time of each (open to first result).
//
//   build/bench/python_bench [--calls 20000] [--sidecar-calls 3000] [--rounds 3] [--starts 5]
//
// Rows of a round run one after the other (interleaved rounds: the machine is shared).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "bench/bench_support.h"
#include "bench/deployer_calls.h"
#include "bench/pipe_floor.h"
#include "bench/sidecar_client.h"
#include "tests/support/paths.h"

namespace {

using plugboard::bench::BenchClock;
using plugboard::bench::kEchoRequest;
using plugboard::bench::micros;
using plugboard::bench::mustSucceed;
using plugboard::bench::Stats;
using plugboard::bench::statsOf;
using plugboard::bench::timeCalls;
using plugboard::bench::timeEchoCalls;
namespace core = plugboard::core;

const std::string kArgoBody =
    R"({"workflow":{"metadata":{"name":"bench"}},"template":{"name":"t","plugin":{"echo":{"greeting":"Hello, bench!"}}}})";

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  int calls = 20000, sidecar_calls = 3000, rounds = 3, starts = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--calls") calls = value;
    if (flag == "--sidecar-calls") sidecar_calls = value;
    if (flag == "--rounds") rounds = value;
    if (flag == "--starts") starts = value;
  }
  plugboard::bench::BuiltDeployers deployers;
  const core::Json echo = {{"path", plugboard::testing::plugin("echo").string()}};
  const core::Json pyecho = {
      {"path", (plugboard::testing::sourceDir() / "bench/pyecho.py").string()}};
  const core::Json embedded = {{"mode", "embedded"}};

  // Start-up first, so that the first embedded open is the interpreter's start.
  std::vector<double> native_start, embedded_later, process_start, sidecar_start;
  double embedded_first = 0;
  for (int i = 0; i < starts; ++i) {
    auto timeStart = [&](const char* deployer, const core::Json& options) {
      const auto start = BenchClock::now();
      auto h = deployers.open(deployer, std::string(deployer) == "native" ? echo : pyecho, options);
      mustSucceed(h->callText(kEchoRequest, h->newCallId()));
      return micros(start, BenchClock::now()) / 1000.0;
    };
    native_start.push_back(timeStart("native", core::Json::object()));
    (i == 0 ? embedded_first : embedded_later.emplace_back()) = timeStart("python", embedded);
    process_start.push_back(timeStart("python", core::Json::object()));
    const auto start = BenchClock::now();
    {
      plugboard::bench::Sidecar sidecar(kArgoBody);
      sidecar.call();
      sidecar_start.push_back(micros(start, BenchClock::now()) / 1000.0);
    }
  }
  std::printf(
      "Start-up: open to first result, ms (median of %d; embedded's first open also starts the "
      "interpreter)\n\n",
      starts);
  std::printf("| what | median ms | min ms | max ms |\n|---|---:|---:|---:|\n");
  const auto startRow = [](const char* what, std::vector<double> v) {
    const Stats s = statsOf(std::move(v));
    std::printf("| %s | %.2f | %.2f | %.2f |\n", what, s.median, s.min, s.max);
  };
  startRow("`native` deployer, C++ echo (dlopen)", native_start);
  std::printf("| python, embedded: first open (interpreter start + import) | %.2f | | |\n",
              embedded_first);
  if (!embedded_later.empty()) startRow("python, embedded: later opens (import)", embedded_later);
  startRow("python, process (spawn python3, import, hello)", process_start);
  startRow("Python http.server sidecar (spawn, listen, connect, first call)", sidecar_start);

  auto native = deployers.open("native", echo);
  auto inside = deployers.open("python", pyecho, embedded);
  auto child = deployers.open("python", pyecho);
  plugboard::bench::Sidecar sidecar(kArgoBody);
  const std::string request = R"({"type":"execute","id":1,"request":)" + kEchoRequest + "}\n";
  const std::string reply =
      R"({"type":"result","id":1,"result":{"phase":"Succeeded","outputs":{"parameters":{"greeting":"Hello, bench!"}}}})"
      "\n";
  timeEchoCalls(*inside, 1000);  // warm up
  timeEchoCalls(*child, 1000);
  timeCalls(300, [&] { sidecar.call(); });

  std::printf(
      "\nPer call: one trivial function, small args (%d calls per row, %d through the sidecar)\n\n",
      calls, sidecar_calls);
  std::printf("| round | what | median µs | p99 µs | ratio |\n|---:|---|---:|---:|---|\n");
  for (int r = 1; r <= rounds; ++r) {
    const Stats floor = plugboard::bench::timePipeFloor(calls, request, reply, false);
    const Stats in_cpp = timeEchoCalls(*native, calls);
    const Stats emb = timeEchoCalls(*inside, calls);
    const Stats proc = timeEchoCalls(*child, calls);
    const Stats http = timeCalls(sidecar_calls, [&] { sidecar.call(); });
    std::printf("| %d | pipe ping-pong between two processes (floor) | %.1f | %.1f | |\n", r,
                floor.median, floor.p99);
    std::printf("| %d | C++ echo in-process (`native`) | %.1f | %.1f | |\n", r, in_cpp.median,
                in_cpp.p99);
    std::printf("| %d | python, embedded | %.1f | %.1f | %.2fx native |\n", r, emb.median, emb.p99,
                emb.median / in_cpp.median);
    std::printf("| %d | python, process | %.1f | %.1f | %.2fx pipe floor |\n", r, proc.median,
                proc.p99, proc.median / floor.median);
    std::printf(
        "| %d | Python http.server sidecar | %.1f | %.1f | %.1fx embedded, %.1fx process |\n", r,
        http.median, http.p99, http.median / emb.median, http.median / proc.median);
    std::fflush(stdout);
  }
  return 0;
}

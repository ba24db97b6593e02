// atp_bench: the per-call overhead of one trivial Arcaflow step (bench/atp_echo.py, its
// config back) through the atp deployer, in one long-lived plugin process, next to the same
// function over plugboard's protocol through the python deployer (bench/pyecho.py) and a
// bare CBOR ping-pong over two pipes between two C++ processes (the floor: the same ATP
// messages encoded and decoded, no work); the plugin's own Python time per call
// (bench/atp_selftime.py: no pipe, no runtime) is measured apart. Then start-up to the
// first result, and a step run the Arcaflow engine's way (a fresh process per step: start,
// hello, one call, CLIENT_DONE) against a call to the long-lived process.
//
//   build/bench/atp_bench [--calls 5000] [--rounds 3] [--starts 10]
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "bench/bench_support.h"
#include "bench/deployer_calls.h"
#include "deployers/atp/cbor_reader.h"
#include "tests/support/paths.h"
#include "tests/support/subprocess.h"

namespace {

using plugboard::bench::BenchClock;
using plugboard::bench::kEchoRequest;
using plugboard::bench::micros;
using plugboard::bench::mustSucceed;
using plugboard::bench::Stats;
using plugboard::bench::statsOf;
using plugboard::bench::timeEchoCalls;
namespace core = plugboard::core;
using Json = nlohmann::json;

std::string cbor(const Json& j) {
  const auto v = Json::to_cbor(j);
  return std::string(v.begin(), v.end());
}

void writeAll(int fd, const std::string& s) {
  for (std::size_t done = 0; done < s.size();) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n <= 0) ::_exit(1);
    done += static_cast<std::size_t>(n);
  }
}

// Reads one CBOR item from `fd` with `reader`.
Json readItem(int fd, plugboard::atp_deployer::CborReader& reader, std::vector<Json>& items) {
  char buf[4096];
  while (items.empty()) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) ::_exit(0);
    if (!reader.feed(std::string_view(buf, static_cast<std::size_t>(n)), items)) ::_exit(1);
  }
  Json item = std::move(items.front());
  items.erase(items.begin());
  return item;
}

// The floor: WORK_START to a C++ child that decodes it and answers a WORK_DONE, both
// sides encoding with nlohmann's to_cbor and decoding with the atp deployer's CborReader.
Stats cborFloor(int calls) {
  int to_child[2], from_child[2];
  if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) std::exit(1);
  const Json config = {{"greeting", "Hello, bench!"}};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(to_child[1]);
    ::close(from_child[0]);
    plugboard::atp_deployer::CborReader reader(1 << 20, 64, true);
    std::vector<Json> items;
    for (;;) {
      Json m = readItem(to_child[0], reader, items);
      writeAll(from_child[1], cbor({{"id", 2},
                                    {"run_id", m["run_id"]},
                                    {"data",
                                     {{"output_id", "success"},
                                      {"output_data", m["data"]["config"]},
                                      {"debug_logs", ""}}}}));
    }
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  plugboard::atp_deployer::CborReader reader(1 << 20, 64, true);
  std::vector<Json> items;
  std::vector<double> samples;
  for (int i = 0; i < calls; ++i) {
    const auto start = BenchClock::now();
    writeAll(to_child[1], cbor({{"id", 1},
                                {"run_id", "pb-" + std::to_string(i)},
                                {"data", {{"id", "echo"}, {"config", config}}}}));
    Json reply = readItem(from_child[0], reader, items);
    samples.push_back(micros(start, BenchClock::now()));
  }
  ::close(to_child[1]);
  ::close(from_child[0]);
  ::waitpid(pid, nullptr, 0);
  return statsOf(std::move(samples));
}

double pythonSelfTime(int calls) {
  const auto r = plugboard::testing::run(
      {"/usr/bin/python3", (plugboard::testing::sourceDir() / "bench/atp_selftime.py").string(),
       std::to_string(calls)});
  return std::atof(r.out.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  const auto flags = plugboard::bench::readFlags(argc, argv, {5000, 3, 10, {}});
  const int calls = flags.calls, rounds = flags.rounds, starts = flags.starts;
  plugboard::bench::BuiltDeployers deployers;
  const core::Json atp = {
      {"path", (plugboard::testing::sourceDir() / "bench/atp_echo.py").string()},
      {"plugin", "atpecho@1.0.0"}};
  const core::Json no_cache = {{"cache_dir", ""}};
  const core::Json pyecho = {
      {"path", (plugboard::testing::sourceDir() / "bench/pyecho.py").string()}};

  // Start-up: open (spawn python3, import, start output, hello) to the first result; and
  // the Arcaflow engine's way, a fresh process per step: the same, then CLIENT_DONE and the
  // process's end.
  std::vector<double> first, fresh_step;
  for (int i = 0; i < starts; ++i) {
    const auto start = BenchClock::now();
    auto h = deployers.open("atp", atp, no_cache);
    mustSucceed(h->callText(kEchoRequest, h->newCallId()));
    first.push_back(micros(start, BenchClock::now()) / 1000.0);
    h.reset();
    fresh_step.push_back(micros(start, BenchClock::now()) / 1000.0);
  }
  auto warm = deployers.open("atp", atp, no_cache);
  auto child = deployers.open("python", pyecho);
  timeEchoCalls(*warm, 500);  // warm up
  timeEchoCalls(*child, 500);
  const Stats warm_call = timeEchoCalls(*warm, 200);
  const Stats f = statsOf(first), s = statsOf(fresh_step);
  std::printf(
      "Start-up (median of %d, ms)\n\n| what | median ms | min ms | max ms "
      "|\n|---|---:|---:|---:|\n",
      starts);
  std::printf(
      "| atp: open to first result (spawn python3, import, hello, one call) | %.1f | %.1f | %.1f "
      "|\n",
      f.median, f.min, f.max);
  std::printf(
      "| a step the Arcaflow engine's way (that, then CLIENT_DONE and exit) | %.1f | %.1f | %.1f "
      "|\n",
      s.median, s.min, s.max);
  std::printf("| a step in the long-lived process (one call) | %.3f | %.3f | %.3f |\n\n",
              warm_call.median / 1000, warm_call.min / 1000, warm_call.max / 1000);

  std::printf("Per call: one trivial step, small args (%d calls per row)\n\n", calls);
  std::printf("| round | what | median µs | p99 µs | ratio |\n|---:|---|---:|---:|---|\n");
  for (int r = 1; r <= rounds; ++r) {
    const Stats floor = cborFloor(calls);
    const double self = pythonSelfTime(calls);
    const Stats a = timeEchoCalls(*warm, calls);
    const Stats p = timeEchoCalls(*child, calls);
    std::printf("| %d | CBOR ping-pong between two C++ processes (floor) | %.1f | %.1f | |\n", r,
                floor.median, floor.p99);
    std::printf(
        "| %d | the plugin's own Python time (atpkit: decode, thread per run, encode) | %.1f | | "
        "|\n",
        r, self);
    std::printf(
        "| %d | atp deployer, long-lived process | %.1f | %.1f | %.2fx (floor + own time) |\n", r,
        a.median, a.p99, a.median / (floor.median + self));
    std::printf("| %d | python deployer, plugboard's protocol (pyecho) | %.1f | %.1f | |\n", r,
                p.median, p.p99);
  }
  return 0;
}

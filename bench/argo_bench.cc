// argo_bench: calls to an Argo executor-plugin sidecar through the argo deployer, next to
// the same sidecar called directly by a C++ keep-alive client (the floor: what any client
// pays) and to the container deployer calling the echo plugin in its image; and the argo
// deployer's cold start (sidecar start to first result) next to `podman run` of the
// sidecar's image running python3 and exiting.
//
//   build/bench/argo_bench [--calls 2000] [--rounds 3] [--starts 10]
//   build/bench/argo_bench --url http://127.0.0.1:PORT --key PLUGIN [--token T] [--calls N]
//   [--rounds N]
//
// With --url, the warm rows only, against a sidecar already running there (e.g. one of
// your own, or `plugboard serve`, to see the deployer's cost next to a fast server); the
// requests name plugin --key.
//
// The sidecar is the test sidecar (tests/support/argo_sidecar, image made by
// tests/support/make_argo_sidecar_image.sh) answering as HTTP/1.1 with keep-alive
// (KEEP_ALIVE=1); the floor's connection is made in the sidecar's network namespace, as
// the deployer's are. Rows are interleaved (the machine is shared). Needs root.
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <plugboard/host/argo.h>
#include <spdlog/spdlog.h>

#include "bench/bench_support.h"
#include "bench/deployer_calls.h"
#include "bench/sidecar_client.h"
#include "plugboard/host/spawn.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"

namespace {

using plugboard::bench::BenchClock;
using plugboard::bench::benchFailed;
using plugboard::bench::millis;
using plugboard::bench::mustSucceed;
using plugboard::bench::Stats;
using plugboard::bench::statsOf;
namespace core = plugboard::core;

const char* const kSidecarImage = "localhost/plugboard-test/argo-sidecar:latest";
const char* const kEchoImage = "localhost/plugboard-bench/echo:latest";
const std::string kRequest =
    R"({"rpc":"template.execute","key":"argo-greeter","via":"name","args":{"name":"bench"},)"
    R"("workflow":{"metadata":{"name":"bench"}},"template":{"name":"step"}})";

std::string output(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) benchFailed("cannot run " + command);
  char buffer[4096];
  for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, p)) > 0;) out.append(buffer, n);
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// The floor: a keep-alive connection made in the network namespace of the one running
// sidecar, with its token.
std::unique_ptr<plugboard::bench::KeepAliveConnection> directConnection(std::string& token) {
  const std::string name = output("podman ps --filter name=^plugboard-argo- --format '{{.Names}}'");
  if (name.empty() || name.find('\n') != std::string::npos) benchFailed("not one sidecar: " + name);
  const std::string pid = output("podman inspect --format '{{.State.Pid}}' " + name);
  const std::string dir =
      output("podman inspect --format '{{range .Mounts}}{{.Source}}{{end}}' " + name);
  std::ifstream in(dir + "/token");
  std::getline(in, token);
  const int ns = ::open(("/proc/" + pid + "/ns/net").c_str(), O_RDONLY | O_CLOEXEC);
  if (ns < 0 || token.size() != 32) benchFailed("cannot reach sidecar " + name);
  int fd = -1;
  std::thread([&] {
    if (::setns(ns, CLONE_NEWNET) == 0) fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  }).join();
  ::close(ns);
  if (fd < 0) benchFailed("cannot make a socket in the sidecar's network namespace");
  return std::make_unique<plugboard::bench::KeepAliveConnection>(4355, fd);
}

// The warm rows: each round times the floor, the argo deployer and (when given) the
// container deployer's echo back to back, then the floor and the argo deployer with a
// pause of kGap before each call (the sidecar waiting for a request, as between a
// workflow's steps).
constexpr std::chrono::microseconds kGap{200};

// User and system CPU time of this process so far, in µs.
double cpuMicros() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  const auto us = [](const timeval& t) { return t.tv_sec * 1e6 + t.tv_usec; };
  return us(u.ru_utime) + us(u.ru_stime);
}
void warmRows(int calls, int rounds, const std::function<void()>& floor_call,
              const std::function<void()>& argo_call, const std::function<void()>& boxed_call) {
  using plugboard::bench::timeCalls;
  timeCalls(200, argo_call);  // warm up
  timeCalls(200, floor_call);
  if (boxed_call) timeCalls(200, boxed_call);
  std::printf(
      "| round | calls | what | median µs | p99 µs | median / floor | client CPU µs a call |\n"
      "|---:|---|---|---:|---:|---:|---:|\n");
  // Times `calls` calls and the CPU this process (the client) spent on them.
  const auto timed = [&](const std::function<void()>& call, std::chrono::microseconds gap) {
    const double before = cpuMicros();
    Stats s = timeCalls(calls, call, gap);
    return std::pair(s, (cpuMicros() - before) / calls);
  };
  const auto row = [](int r, const char* how, const char* what, const std::pair<Stats, double>& s,
                      const std::pair<Stats, double>& floor) {
    std::printf("| %d | %s | %s | %.1f | %.1f | %.2fx | %.1f |\n", r, how, what, s.first.median,
                s.first.p99, s.first.median / floor.first.median, s.second);
  };
  for (int r = 1; r <= rounds; ++r) {
    const auto floor = timed(floor_call, {});
    const auto argo = timed(argo_call, {});
    row(r, "back to back", "sidecar, direct C++ keep-alive client (floor)", floor, floor);
    row(r, "back to back", "sidecar through the `argo` deployer", argo, floor);
    if (boxed_call)
      row(r, "back to back", "echo through the `container` deployer", timed(boxed_call, {}), floor);
    const auto idle_floor = timed(floor_call, kGap);
    const auto idle_argo = timed(argo_call, kGap);
    row(r, "200 µs apart", "sidecar, direct C++ keep-alive client (floor)", idle_floor, idle_floor);
    row(r, "200 µs apart", "sidecar through the `argo` deployer", idle_argo, idle_floor);
    std::fflush(stdout);
  }
}

// The request of every warm call, naming plugin `key`.
std::string requestFor(const std::string& key) {
  core::Json request = core::Json::parse(kRequest);
  request["key"] = key;
  return request.dump();
}

// The warm rows against the sidecar at `url` (no container rows).
int warmAgainstUrl(const std::string& url, const std::string& key, const std::string& token,
                   int calls, int rounds) {
  const auto colon = url.rfind(':');
  const int port = colon == std::string::npos ? 0 : std::atoi(url.c_str() + colon + 1);
  if (!url.starts_with("http://127.0.0.1:") || port <= 0)
    benchFailed("--url must be http://127.0.0.1:PORT");
  plugboard::bench::BuiltDeployers deployers;
  auto argo = deployers.open("argo", {{"url", url}, {"name", key}, {"token", token}});
  plugboard::bench::KeepAliveConnection direct(static_cast<unsigned short>(port));
  const std::string request = requestFor(key);
  const std::string body =
      plugboard::host::executeTemplateArgs(core::Json::parse(request), key, "step");
  const auto viaArgo = [&] { mustSucceed(argo->callText(request, argo->newCallId())); };
  const auto viaFloor = [&] { direct.post(body, token); };
  std::printf("Warm round trip of one call to %s (%d calls per row)\n\n", url.c_str(), calls);
  warmRows(calls, rounds, viaFloor, viaArgo, nullptr);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  const auto flags = plugboard::bench::readFlags(argc, argv, {2000, 3, 10, {}});
  const int calls = flags.calls, rounds = flags.rounds, starts = flags.starts;
  const std::string url = flags.get("--url"), key = flags.get("--key", "argo-greeter"),
                    given_token = flags.get("--token");
  if (!url.empty()) return warmAgainstUrl(url, key, given_token, calls, rounds);
  namespace testing = plugboard::testing;
  const std::string sidecar_image =
      (testing::sourceDir() / "tests/support/make_argo_sidecar_image.sh").string() +
      " >/dev/null 2>&1";
  const std::string echo_image = (testing::sourceDir() / "tools/plugin-image.sh").string() + " " +
                                 testing::plugin("echo").string() + " " + kEchoImage + " --host " +
                                 (testing::buildDir() / "plugboard-host").string() + " >/dev/null";
  for (const auto& make : {sidecar_image, echo_image}) {
    if (std::system(make.c_str()) != 0) benchFailed("could not make an image: " + make);
  }
  testing::TempDir dir;
  const std::string manifest =
      dir.write("plugin.yaml",
                testing::readFile(testing::sourceDir() / "tests/support/argo_sidecar/plugin.yaml"));
  const core::Json artifact = {{"path", manifest}};
  const core::Json options = {{"env", {{"KEEP_ALIVE", "1"}}}};
  plugboard::bench::BuiltDeployers deployers;

  const std::vector<std::string> podman_run =
      plugboard::bench::podmanRun({"--user", "8737"}, kSidecarImage, {"python3", "-c", "pass"});
  std::vector<double> podman_start, cold_start, cold_whole;
  for (int i = 0; i < starts; ++i) {
    auto t0 = BenchClock::now();
    if (plugboard::host::runToEnd(podman_run, std::chrono::seconds(60)) != 0)
      benchFailed("podman run ... python3 -c pass failed");
    podman_start.push_back(millis(t0, BenchClock::now()));
    t0 = BenchClock::now();
    {
      auto h = deployers.open("argo", artifact, options);
      mustSucceed(h->callText(kRequest, h->newCallId()));
      cold_start.push_back(millis(t0, BenchClock::now()));
    }
    cold_whole.push_back(millis(t0, BenchClock::now()));  // the sidecar removed
  }
  const Stats p = statsOf(podman_start), c = statsOf(cold_start), w = statsOf(cold_whole);
  std::printf("Cold start, ms (%d each, interleaved)\n\n", starts);
  std::printf("| what | median ms | min ms | max ms |\n|---|---:|---:|---:|\n");
  std::printf("| `podman run --rm IMAGE python3 -c pass` (same flags) | %.1f | %.1f | %.1f |\n",
              p.median, p.min, p.max);
  std::printf("| `argo` deployer: open to first result | %.1f | %.1f | %.1f |\n", c.median, c.min,
              c.max);
  std::printf(
      "| `argo` deployer: open, first result, close (sidecar removed) | %.1f | %.1f | %.1f |\n",
      w.median, w.min, w.max);

  auto argo = deployers.open("argo", artifact, options);
  auto boxed = deployers.open("container", {{"image", kEchoImage}});
  std::string token;
  auto direct = directConnection(token);
  const std::string body =
      plugboard::host::executeTemplateArgs(core::Json::parse(kRequest), "argo-greeter", "step");
  const auto viaArgo = [&] { mustSucceed(argo->callText(kRequest, argo->newCallId())); };
  const auto viaFloor = [&] { direct->post(body, token); };
  const auto viaContainer = [&] {
    mustSucceed(boxed->callText(plugboard::bench::kEchoRequest, boxed->newCallId()));
  };
  std::printf("\nWarm round trip of one call (%d calls per row)\n\n", calls);
  warmRows(calls, rounds, viaFloor, viaArgo, viaContainer);
  return 0;
}

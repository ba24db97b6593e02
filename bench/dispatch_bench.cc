// dispatch_bench: the cost of routing one template to an in-process plugin.
//
//   build/bench/dispatch_bench [--calls 20000] [--http-calls 3000] [--sections named,poll,http]
//
// Prints three tables, each measured side by side in one run:
// 1. Dispatch by name to echo (small args), with 1, 100 and 10,000 plugins installed,
//    including the JSON round trip across the C ABI; next to it the floor: parsing the
//    same request and serialising and re-parsing the same result with the same JSON
//    library, no routing.
// 2. The polling fallback over 100 candidate plugins that all decline.
// 3. The same Argo template (an ExecuteTemplateArgs body in, an ExecuteTemplateReply out)
//    in-process, and through an Argo-style Python http.server sidecar on loopback
//    (bench/sidecar.py, keep-alive, Nagle off) doing the same work.
// Latencies are per call, in microseconds: median and 99th percentile.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "bench/bench_support.h"
#include "bench/sidecar_client.h"
#include "core/serving/argo.h"
#include "core/manifests/catalog.h"
#include "core/routing/dispatcher.h"
#include "tests/support/launch.h"
#include "tests/support/paths.h"

namespace {

namespace fs = std::filesystem;
using plugboard::bench::Stats;
using plugboard::bench::statsOf;
using plugboard::core::Json;
using Clock = std::chrono::steady_clock;

template <class F>
Stats timeEach(int calls, F f) {
  for (int i = 0; i < std::max(100, calls / 20); ++i) f();  // warm up: load, caches
  std::vector<double> us;
  us.reserve(calls);
  for (int i = 0; i < calls; ++i) {
    const auto start = Clock::now();
    f();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return statsOf(std::move(us));
}

// Times several workloads in interleaved rounds, so that a change in machine load
// during the run affects them all alike. Returns one Stats per workload.
std::vector<Stats> timeInterleaved(int calls, const std::vector<std::function<void()>>& work) {
  constexpr int kRounds = 10;
  std::vector<std::vector<double>> samples(work.size());
  for (const auto& w : work) {
    for (int i = 0; i < std::max(100, calls / 20); ++i) w();  // warm up: load, caches
  }
  for (int round = 0; round < kRounds; ++round) {
    for (std::size_t k = 0; k < work.size(); ++k) {
      for (int i = 0; i < calls / kRounds; ++i) {
        const auto start = Clock::now();
        work[k]();
        samples[k].push_back(
            std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      }
    }
  }
  std::vector<Stats> out;
  for (auto& s : samples) out.push_back(statsOf(std::move(s)));
  return out;
}

void row(const std::string& label, const Stats& s, double base) {
  std::printf("| %s | %.2f | %.2f | %.2fx |\n", label.c_str(), s.median, s.p99, s.median / base);
}

// Small args for echo, which returns them as its output parameters.
const Json kArgs = {{"greeting", "Hello, bench!"}};

// Dispatch to echo with `installed` plugins in the catalog (echo and installed-1 copies).
struct Installed {
  explicit Installed(std::size_t installed) {
    fs::copy_file(plugboard::testing::plugin("echo"), dir / "echo.so");
    plugboard::bench::makeCopies(plugboard::testing::plugin("echo"), "echo", dir.path(),
                                 installed - 1);
    request.key = "echo";
    request.args = kArgs;
    catalog =
        std::make_unique<plugboard::core::Catalog>(plugboard::core::Catalog::scan({dir.path()}));
    dispatcher =
        std::make_unique<plugboard::core::Dispatcher>(*catalog, plugboard::testing::inProcess());
  }
  void call() {
    auto d = dispatcher->dispatch(request, control);
    if (d.outcome.phase != plugboard::core::Phase::kSucceeded) std::abort();
  }
  plugboard::testing::TempDir dir;
  std::unique_ptr<plugboard::core::Catalog> catalog;
  std::unique_ptr<plugboard::core::Dispatcher> dispatcher;
  plugboard::core::DispatchRequest request;
  plugboard::core::CallControl control;
};

// The floor: the same request parsed, the same result serialised and parsed back.
std::function<void()> floorWork() {
  const std::string request =
      Json{{"rpc", "template.execute"}, {"key", "echo"}, {"via", "name"}, {"args", kArgs}}.dump();
  const Json result = {{"phase", "Succeeded"}, {"outputs", {{"parameters", kArgs}}}};
  return [request, result] {
    Json parsed = Json::parse(request);
    std::string text = result.dump();
    Json back = Json::parse(text);
    if (parsed.empty() || back.empty()) std::abort();
  };
}

Stats pollingOver(std::size_t candidates, int calls) {
  plugboard::testing::TempDir dir;
  // legacy-executor-plugin is too long a name to rewrite in place; its copies are named
  // p0000... through a same-length edit of the whole name member.
  const std::string bytes = plugboard::testing::readFile(plugboard::testing::plugin("legacy"));
  const std::string find = R"("name":"legacy-executor-plugin")";
  for (std::size_t i = 0; i < candidates; ++i) {
    std::string name = "polled-" + plugboard::bench::copyName(i);
    name += std::string(22 - name.size(), 'x');  // same length as legacy-executor-plugin
    plugboard::testing::writeFile(
        dir / (name + ".so"),
        plugboard::testing::withEdit(bytes, find, "\"name\":\"" + name + "\""));
  }
  auto catalog = plugboard::core::Catalog::scan({dir.path()});
  plugboard::core::Dispatcher dispatcher(catalog, plugboard::testing::inProcess());
  plugboard::core::DispatchRequest request;
  request.key = "nobody";
  request.args = kArgs;  // no legacy marker: every candidate declines
  plugboard::core::CallControl control;
  return timeEach(calls, [&] {
    auto d = dispatcher.dispatch(request, control);
    if (d.handled || d.tried.size() != candidates) std::abort();
  });
}

const std::string kArgoBody =
    Json{{"workflow", {{"metadata", {{"name", "wf"}, {"namespace", "argo"}, {"uid", "1"}}}}},
         {"template", {{"name", "t"}, {"plugin", {{"echo", kArgs}}}}}}
        .dump();

// The in-process side: the same template dispatched to echo, with the context a runner
// sends; and the whole Argo path, parsing the ExecuteTemplateArgs body and writing the
// ExecuteTemplateReply, as `plugboard exec` does.
struct InProcess {
  InProcess() {
    request.key = "echo";
    request.args = kArgs;
    request.context = {{"workflow", {{"metadata", {{"name", "wf"}}}}},
                       {"template", {{"name", "t"}}}};
  }
  void dispatchOnly() {
    auto d = dispatcher.dispatch(request, control);
    if (d.outcome.phase != plugboard::core::Phase::kSucceeded) std::abort();
  }
  void argoPath() {
    auto parsed = plugboard::core::parseExecuteTemplateArgs(kArgoBody);
    auto d = dispatcher.dispatch(*parsed, control);
    std::string reply = plugboard::core::executeTemplateReply(d.outcome, std::chrono::seconds(1));
    if (reply.empty()) std::abort();
  }
  plugboard::core::Catalog catalog =
      plugboard::core::Catalog::scan({plugboard::testing::pluginDir()});
  plugboard::core::Dispatcher dispatcher{catalog, plugboard::testing::inProcess()};
  plugboard::core::DispatchRequest request;
  plugboard::core::CallControl control;
};

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);  // as the CLI runs by default
  int calls = 20000, http_calls = 3000;
  std::string sections = "named,poll,http";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--calls") calls = std::stoi(argv[i + 1]);
    if (std::string(argv[i]) == "--http-calls") http_calls = std::stoi(argv[i + 1]);
    if (std::string(argv[i]) == "--sections") sections = argv[i + 1];
  }
  auto wanted = [&](const char* section) { return sections.find(section) != std::string::npos; };
  if (wanted("named")) {
    std::printf("Dispatch by name to echo, small args (%d calls each)\n\n", calls);
    std::printf("| what | median µs | p99 µs | ratio to floor |\n|---|---:|---:|---:|\n");
    Installed one(1), hundred(100), tenk(10000);
    const auto named = timeInterleaved(
        calls, {floorWork(), [&] { one.call(); }, [&] { hundred.call(); }, [&] { tenk.call(); }});
    row("floor: parse request, serialise + re-parse result", named[0], named[0].median);
    row("dispatch, 1 plugin installed", named[1], named[0].median);
    row("dispatch, 100 plugins installed", named[2], named[0].median);
    row("dispatch, 10,000 plugins installed", named[3], named[0].median);
  }
  if (wanted("poll")) {
    std::printf("\nPolling fallback: 100 candidates, all decline (%d polls)\n\n", calls / 20);
    std::printf("| what | median µs | p99 µs | per candidate µs |\n|---|---:|---:|---:|\n");
    const Stats poll = pollingOver(100, calls / 20);
    std::printf("| poll 100 legacy plugins | %.1f | %.1f | %.2f |\n", poll.median, poll.p99,
                poll.median / 100);
  }
  if (wanted("http")) {
    std::printf("\nThe same template in-process and through an HTTP sidecar (%d calls each)\n\n",
                http_calls);
    std::printf("| what | median µs | p99 µs | sidecar / this |\n|---|---:|---:|---:|\n");
    InProcess in_process;
    plugboard::bench::Sidecar sidecar(kArgoBody);
    const auto s =
        timeInterleaved(http_calls, {[&] { in_process.dispatchOnly(); },
                                     [&] { in_process.argoPath(); }, [&] { sidecar.call(); }});
    auto line = [&](const char* label, const Stats& x) {
      std::printf("| %s | %.2f | %.2f | %.1fx |\n", label, x.median, x.p99, s[2].median / x.median);
    };
    line("in-process dispatch, as `plugboard run` calls a plugin", s[0]);
    line("in-process, parsing ExecuteTemplateArgs and writing the reply, as `plugboard exec`",
         s[1]);
    line("Python http.server sidecar on loopback (keep-alive, Nagle off)", s[2]);
  }
}

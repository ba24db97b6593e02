// engine_bench: the workflow engine's own cost per task (core/workflows/engine.h), with
// leaves that answer at once, so that what is measured is the engine: scheduling, tags,
// node status, outputs.
//
//   build/bench/engine_bench [--tasks 1000,10000] [--runs 3]
//
// Shapes of N plugin leaves: independent (a dag of N roots), chained (each task depends
// on the one before and passes its output along), fan (one root, N-2 tasks on it, one
// join on all). Prints per task: CPU time (user + system of the whole process, run on
// WorkerPoolEnv of 2 workers), the heap in use at its peak (sampled from the calls) and
// what the finished run holds (its node statuses), over the heap before the run.
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/workflows/engine.h"

namespace {

using plugboard::core::Json;
namespace core = plugboard::core;

// Answers at once; samples the heap in use every 64 calls (its peak is the run's).
class Instant final : public core::LeafCalls {
 public:
  std::atomic<std::size_t> peak{0};
  std::atomic<int> calls{0};
  std::optional<core::Outcome> check(const core::LeafCall&) override { return std::nullopt; }
  core::Dispatch call(const core::LeafCall& call, core::CallControl&) override {
    if (calls++ % 64 == 0) {
      const std::size_t now = mallinfo2().uordblks;
      std::size_t seen = peak.load();
      while (now > seen && !peak.compare_exchange_weak(seen, now)) {
      }
    }
    core::Dispatch d;
    d.plugin = "echo@1.0.0";
    d.outcome.phase = core::Phase::kSucceeded;
    d.outcome.outputs = {{"parameters", call.plugin.args}};
    return d;
  }
};

core::WorkflowModel model(const std::string& shape, int n) {
  core::WorkflowModel m;
  m.name = "bench";
  m.entrypoint = "main";
  core::Template echo;
  echo.name = "echo";
  echo.kind = core::Template::Kind::kPlugin;
  echo.plugin.key = "echo";
  echo.plugin.args = {{"message", "{{inputs.parameters.message}}"}};
  echo.original = {{"name", "echo"}, {"plugin", {{"echo", echo.plugin.args}}}};
  core::ParameterDecl in;
  in.name = "message";
  echo.inputs.push_back(in);
  core::OutputParameterDecl out;
  out.name = "message";
  echo.outputs.push_back(out);
  core::Template dag;
  dag.name = "main";
  dag.kind = core::Template::Kind::kDag;
  for (int i = 0; i < n; ++i) {
    core::TemplateCall t;
    t.name = "t" + std::to_string(i);
    t.template_name = "echo";
    std::string message = "hello " + std::to_string(i);
    auto dependOn = [&](int j) {
      const std::string d = "t" + std::to_string(j);
      t.depends += (t.depends.empty() ? "" : " && ") + d;
      t.depends_on.push_back(d);
    };
    if (shape == "chained" && i > 0) {
      dependOn(i - 1);
      message = "{{tasks.t" + std::to_string(i - 1) + ".outputs.parameters.message}}";
    } else if (shape == "fan" && i > 0 && i < n - 1) {
      dependOn(0);
    } else if (shape == "fan" && i == n - 1) {
      for (int j = 1; j < n - 1; ++j) dependOn(j);
    }
    t.arguments.emplace_back("message", message);
    dag.tasks.push_back(std::move(t));
  }
  m.templates.push_back(std::move(dag));
  m.templates.push_back(std::move(echo));
  return m;
}

double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> counts{1000, 10000};
  int runs = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::stoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--tasks") == 0) {
      counts.clear();
      std::string s = argv[i + 1];
      for (std::size_t p = 0; p < s.size();) {
        std::size_t c = s.find(',', p);
        if (c == std::string::npos) c = s.size();
        counts.push_back(std::stoi(s.substr(p, c - p)));
        p = c + 1;
      }
    }
  }
  std::printf("| shape | tasks | CPU µs/task (median of %d) | wall µs/task | heap at peak B/task | heap held after B/task |\n", runs);
  std::printf("|---|---|---|---|---|---|\n");
  for (const char* shape : {"independent", "chained", "fan"}) {
    for (int n : counts) {
      const core::WorkflowModel m = model(shape, n);
      std::vector<double> cpu, wall, heap, peak;
      for (int r = 0; r < runs; ++r) {
        Instant calls;
        core::EngineOptions options;
        options.parallel = 2;
        core::Engine engine(calls, options);
        const auto before_heap = mallinfo2().uordblks;
        const double c0 = cpuSeconds();
        const auto w0 = std::chrono::steady_clock::now();
        core::RunResult result = engine.run(m, Json::object());
        const auto w1 = std::chrono::steady_clock::now();
        const double c1 = cpuSeconds();
        const auto after_heap = mallinfo2().uordblks;
        if (result.phase != core::NodePhase::kSucceeded) {
          std::fprintf(stderr, "%s %d: %s\n", shape, n, result.message.c_str());
          return 1;
        }
        cpu.push_back((c1 - c0) * 1e6 / n);
        wall.push_back(std::chrono::duration<double, std::micro>(w1 - w0).count() / n);
        heap.push_back(static_cast<double>(after_heap - before_heap) / n);
        peak.push_back(static_cast<double>(std::max(calls.peak.load(), after_heap) - before_heap) / n);
      }
      auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
      };
      std::printf("| %s | %d | %.1f | %.1f | %.0f | %.0f |\n", shape, n, median(cpu), median(wall),
                  median(peak), median(heap));
    }
  }
  return 0;
}

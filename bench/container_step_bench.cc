// container_step_bench: a workflow's container template step, run as the engine runs it
// (core/workflows/leaf_calls.h, through the container deployer's run-to-end mode), next to
// a bare `podman run --rm` of the same image and command with the same flags; and the same
// for a script step (its source mounted into the container) and for a step with one output
// parameter (read with `podman cp`, then the container removed).
//
//   build/bench/container_step_bench [--starts 10]
//
// It first makes the stand-in images (tests/support/make_argo_example_images.sh). Rows are
// interleaved (the machine is shared); each row's sample is one whole step, the container
// gone at its end.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "bench/bench_support.h"
#include "bench/deployer_calls.h"
#include "core/runtime/config.h"
#include "core/runtime/runtime.h"
#include "core/workflows/leaf_calls.h"
#include "plugboard/host/spawn.h"
#include "tests/support/paths.h"

namespace {

namespace core = plugboard::core;
using plugboard::bench::BenchClock;
using plugboard::bench::benchFailed;
using plugboard::bench::millis;
using plugboard::bench::statsOf;

struct Row {
  const char* what;
  std::vector<double> bare, step;
};

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  const auto flags = plugboard::bench::readFlags(argc, argv, {0, 0, 10, {}});
  const std::string make =
      (plugboard::testing::sourceDir() / "tests/support/make_argo_example_images.sh").string() +
      " >/dev/null 2>&1";
  if (std::system(make.c_str()) != 0) benchFailed("could not make the images: " + make);

  core::Config config;
  config.deployer_dirs = {plugboard::testing::deployerDir()};
  auto launcher = core::makeLauncher(config);
  if (!launcher) benchFailed(launcher.error().message());
  core::Catalog catalog;
  core::Dispatcher dispatcher(catalog, core::DispatcherOptions{{}, *launcher});
  core::DispatchedLeafCalls calls(dispatcher);

  core::Template echo;
  echo.name = "echo";
  echo.kind = core::Template::Kind::kContainer;
  echo.container->image = "busybox";
  echo.container->command = {"echo", "hello"};
  core::Template script;
  script.name = "script";
  script.kind = core::Template::Kind::kScript;
  script.container->image = "python:alpine3.23";
  script.container->command = {"python"};
  script.container->source = "print(6 * 7)\n";
  core::Template output;
  output.name = "output";
  output.kind = core::Template::Kind::kContainer;
  output.container->image = "busybox";
  output.container->command = {"sh", "-c", "echo hello > /tmp/hello.txt"};
  core::OutputParameterDecl hello;
  hello.name = "hello";
  hello.from = core::OutputParameterDecl::From::kPath;
  hello.source = "/tmp/hello.txt";
  output.outputs.push_back(hello);

  const auto step = [&](const core::Template& t) {
    core::LeafCall call;
    call.tmpl = &t;
    call.container = *t.container;
    call.workflow_name = "bench";
    if (auto refused = calls.check(call)) benchFailed(refused->message);
    core::CallControl control;
    const auto d = calls.call(call, control);
    if (d.outcome.phase != core::Phase::kSucceeded) benchFailed(d.outcome.message);
  };
  const auto bare = [](const std::vector<std::string>& argv) {
    if (plugboard::host::runToEnd(argv, std::chrono::seconds(60)) != 0)
      benchFailed("a bare podman run failed");
  };
  using plugboard::bench::podmanRun;
  const auto bare_echo = podmanRun({}, "busybox", {"echo", "hello"});
  const auto bare_python = podmanRun({}, "python:alpine3.23", {"python", "-c", "print(6 * 7)"});
  const auto bare_output = podmanRun({}, "busybox", {"sh", "-c", "echo hello > /tmp/hello.txt"});

  step(echo);  // warm up: the deployer loaded, the images in the page cache
  bare(bare_echo);
  std::vector<Row> rows = {{"container `busybox echo hello`", {}, {}},
                           {"script `python` (print), its source mounted", {}, {}},
                           {"container with one output parameter from a path", {}, {}}};
  for (int i = 0; i < flags.starts; ++i) {
    const std::vector<std::pair<const std::vector<std::string>*, const core::Template*>> pairs = {
        {&bare_echo, &echo}, {&bare_python, &script}, {&bare_output, &output}};
    for (std::size_t r = 0; r < pairs.size(); ++r) {
      auto t0 = BenchClock::now();
      bare(*pairs[r].first);
      rows[r].bare.push_back(millis(t0, BenchClock::now()));
      t0 = BenchClock::now();
      step(*pairs[r].second);
      rows[r].step.push_back(millis(t0, BenchClock::now()));
    }
  }
  std::printf("A step to its end, container removed, ms (%d each, interleaved)\n\n", flags.starts);
  std::printf(
      "| what | bare `podman run --rm` median | step median | step / bare | bare min-max | step "
      "min-max |\n|---|---:|---:|---:|---:|---:|\n");
  for (const Row& row : rows) {
    const auto b = statsOf(row.bare), s = statsOf(row.step);
    std::printf("| %s | %.1f | %.1f | %.2fx | %.1f-%.1f | %.1f-%.1f |\n", row.what, b.median,
                s.median, s.median / b.median, b.min, b.max, s.min, s.max);
  }
  return 0;
}

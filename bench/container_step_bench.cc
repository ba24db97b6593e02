// container_step_bench: a workflow's container template step, run as the engine runs it
// (core/workflows/leaf_calls.h, through the container deployer's run-to-end mode), next to
// a bare `podman run --rm` of the same image and command with the same flags; and the same
// for a script step (its source mounted into the container) and for a step with one output
// parameter. The bare run of that one also gets the file out, as a user must: the fastest
// way, a directory of this machine mounted where the command writes it (`-v DIR:/tmp`, the
// file read, the directory removed), and the other, `podman run` without --rm, `podman cp`
// and `podman rm`.
//
//   build/bench/container_step_bench [--starts 10]
//
// It first makes the stand-in images (tests/support/make_argo_example_images.sh). Rows are
// interleaved (the machine is shared); each row's sample is one whole step, the container
// (and any directory made for it) gone at its end, the output's value checked.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
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
  std::function<void()> bare;
  const core::Template* step;
  std::vector<double> bare_ms, step_ms;
};

std::string contentOf(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

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
    if (!t.outputs.empty() && d.outcome.outputs["parameters"]["hello"] != "hello")
      benchFailed("the step's output is not 'hello': " + d.outcome.outputs.dump());
  };
  const auto bare = [](const std::vector<std::string>& argv) {
    if (plugboard::host::runToEnd(argv, std::chrono::seconds(60)) != 0)
      benchFailed("a bare podman run failed");
  };
  using plugboard::bench::podmanRun;
  const auto bare_echo = podmanRun({}, "busybox", {"echo", "hello"});
  const auto bare_python = podmanRun({}, "python:alpine3.23", {"python", "-c", "print(6 * 7)"});
  const std::vector<std::string> write_hello = {"sh", "-c", "echo hello > /tmp/hello.txt"};
  // The output's directory of this machine mounted where the command writes it.
  const auto bare_mounted = [&] {
    char dir[] = "/tmp/plugboard-bench-XXXXXX";
    if (::mkdtemp(dir) == nullptr) benchFailed("cannot make a directory in /tmp");
    bare(podmanRun({"--volume", std::string(dir) + ":/tmp"}, "busybox", write_hello));
    const std::string value = contentOf(std::string(dir) + "/hello.txt");
    std::filesystem::remove_all(dir);
    if (value != "hello\n") benchFailed("the bare run's output is not 'hello'");
  };
  // Kept after it ends, its file copied out, then removed.
  const std::vector<std::string> podman = {"/usr/bin/podman", "--runtime", "runc",
                                           "--cgroup-manager", "cgroupfs"};
  int copies = 0;
  const auto bare_copied = [&] {
    const std::string name = "plugboard-bench-copy-" + std::to_string(::getpid()) + "-" +
                             std::to_string(++copies);
    auto run = podmanRun({"--name", name}, "busybox", write_hello);
    run.erase(std::find(run.begin(), run.end(), "--rm"));
    bare(run);
    char dir[] = "/tmp/plugboard-bench-XXXXXX";
    if (::mkdtemp(dir) == nullptr) benchFailed("cannot make a directory in /tmp");
    auto cp = podman;
    cp.insert(cp.end(), {"cp", name + ":/tmp/hello.txt", std::string(dir) + "/hello.txt"});
    bare(cp);
    auto rm = podman;
    rm.insert(rm.end(), {"rm", name});
    bare(rm);
    const std::string value = contentOf(std::string(dir) + "/hello.txt");
    std::filesystem::remove_all(dir);
    if (value != "hello\n") benchFailed("the bare run's copied output is not 'hello'");
  };

  step(echo);  // warm up: the deployer loaded, the images in the page cache
  bare(bare_echo);
  step(output);
  bare_mounted();
  std::vector<Row> rows = {
      {"container `busybox echo hello`", [&] { bare(bare_echo); }, &echo, {}, {}},
      {"script `python` (print), its source mounted", [&] { bare(bare_python); }, &script, {}, {}},
      {"one output parameter; bare: `-v DIR:/tmp`, file read", bare_mounted, &output, {}, {}},
      {"one output parameter; bare: run, `podman cp`, `podman rm`", bare_copied, &output, {}, {}}};
  for (int i = 0; i < flags.starts; ++i) {
    for (Row& row : rows) {
      auto t0 = BenchClock::now();
      row.bare();
      row.bare_ms.push_back(millis(t0, BenchClock::now()));
      t0 = BenchClock::now();
      step(*row.step);
      row.step_ms.push_back(millis(t0, BenchClock::now()));
    }
  }
  std::printf("A step to its end, container removed, ms (%d each, interleaved)\n\n", flags.starts);
  std::printf(
      "| what | bare podman median | step median | step / bare | bare min-max | step "
      "min-max |\n|---|---:|---:|---:|---:|---:|\n");
  for (const Row& row : rows) {
    const auto b = statsOf(row.bare_ms), s = statsOf(row.step_ms);
    std::printf("| %s | %.1f | %.1f | %.2fx | %.1f-%.1f | %.1f-%.1f |\n", row.what, b.median,
                s.median, s.median / b.median, b.min, b.max, s.min, s.max);
  }
  return 0;
}

// reload_bench: how long a new plugin version takes to answer after it is installed.
//
//   build/bench/reload_bench [--swaps 100]
//
// Runs `plugboard serve` on a plugin directory, then installs hello 1.3.0 and 1.2.0 in
// turn by rename (as `mv` does), and after each rename sends direct calls back to back
// until one is answered by the new version. Reports the median and 99th percentile of the
// time from the rename to that first reply, in milliseconds.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_support.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/server_process.h"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  using namespace plugboard::testing;
  int swaps = 100;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--swaps") swaps = std::stoi(argv[i + 1]);
  }
  TempDir tmp;
  fs::permissions(tmp.path(), fs::perms(0755));
  fs::create_directory(tmp / "plugins");
  fs::permissions(tmp / "plugins", fs::perms(0755));
  const std::string v120 = readFile(plugin("hello"));
  const std::string v130 = withEdit(v120, R"("version":"1.2.0")", R"("version":"1.3.0")");
  writeFile(tmp / "plugins/hello.so", v120);
  ServeProcess serve({"--plugins", (tmp / "plugins").string(), "--log-level", "off"});
  HttpClient client(serve.port());
  auto answering = [&] {
    auto r = client.request("POST", "/api/v1/plugins/hello/template.execute", R"({"name":"x"})");
    return r.status == 200 ? nlohmann::json::parse(r.body).value("plugin", "") : std::string();
  };
  std::vector<double> ms;
  for (int i = 0; i < swaps; ++i) {
    const bool up = i % 2 == 0;
    writeFile(tmp / "staging", up ? v130 : v120);
    const std::string want = up ? "hello@1.3.0" : "hello@1.2.0";
    const auto start = std::chrono::steady_clock::now();
    fs::rename(tmp / "staging", tmp / "plugins/hello.so");
    while (answering() != want) {
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(10)) {
        std::fprintf(stderr, "reload_bench: swap %d never answered\n", i);
        return 1;
      }
    }
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  const auto s = plugboard::bench::statsOf(ms);
  std::printf("| swaps | median ms | p99 ms | min ms | max ms |\n|---:|---:|---:|---:|---:|\n");
  std::printf("| %d | %.1f | %.1f | %.1f | %.1f |\n", swaps, s.median, s.p99, s.min, s.max);
}

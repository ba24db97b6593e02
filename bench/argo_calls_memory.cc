// Memory held by the table of Argo call outcomes (core/serving/argo_calls.h): runs N
// distinct completed calls, each with the hello plugin's reply text (a message and one
// output parameter), and prints the growth of the resident set size while they are kept. One
// measurement per process, so that memory freed by one does not hide another's.
//   build/bench/argo_calls_memory [N, default 100000] [bound, default the server's]
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "core/base/defaults.h"
#include "core/serving/argo_calls.h"

namespace {

using plugboard::core::ArgoCalls;

long rssKiB() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

std::string body(int i) {
  return R"({"workflow":{"metadata":{"name":"wf","namespace":"argo","uid":")" + std::to_string(i) +
         R"("}},"template":{"name":"t","plugin":{"hello":{"name":"bench"}}}})";
}

void measure(int n, std::size_t bound) {
  const long before = rssKiB();
  {
    plugboard::core::ManualClock clock;
    ArgoCalls calls(clock, std::chrono::seconds(10), std::chrono::minutes(10),
                    {bound, std::size_t{1} << 30, std::size_t{1} << 30});
    for (int i = 0; i < n; ++i) {
      calls.execute(
          body(i),
          [](ArgoCalls::Finish finish) {
            finish(ArgoCalls::Reply{
                R"({"node":{"message":"Hello, bench!","outputs":{"parameters":[{"name":"greeting",)"
                R"("value":"Hello, bench!"}]},"phase":"Succeeded"}})",
                true});
          },
          [](std::optional<ArgoCalls::Reply>) {});
    }
    const long after = rssKiB();
    std::printf("| %zu | %d | %zu | %.1f MiB | %.0f B |\n", bound, n, calls.entries(),
                (after - before) / 1024.0,
                calls.entries() ? (after - before) * 1024.0 / calls.entries() : 0.0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::stoi(argv[1]) : 100'000;
  std::printf(
      "| bound | calls | entries kept | RSS growth | per entry |\n|---|---:|---:|---:|---:|\n");
  const std::size_t bound =
      argc > 2 ? std::stoul(argv[2]) : plugboard::core::defaults::kKeepOutcomes;
  measure(n, bound);
}

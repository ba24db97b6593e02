// bench/bench_support.h: what the benchmarks share: many distinct plugin files made
// cheaply from one built plugin, and latency statistics.
#ifndef PLUGBOARD_BENCH_BENCH_SUPPORT_H_
#define PLUGBOARD_BENCH_BENCH_SUPPORT_H_

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/files.h"

namespace plugboard::bench {

// A plugin name of `width` characters for copy `i`: "p" and base-36 digits (46,656
// names at width 4, 1.6 million at width 5).
inline std::string copyName(std::size_t i, std::size_t width = 5) {
  const char* digits = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string s(width, '0');
  s[0] = 'p';
  for (std::size_t pos = width - 1; pos >= 1; --pos, i /= 36) s[pos] = digits[i % 36];
  return s;
}

// Writes `count` copies of `source` into `dir`, stripped of debug info (shipped plugins
// carry none, and 10,000 copies stay small), each with its manifest name `source_name`
// rewritten to copyName(i) of the same length. Exits on failure.
inline void makeCopies(const std::filesystem::path& source, const std::string& source_name,
                       const std::filesystem::path& dir, std::size_t count) {
  const auto stripped = dir / "stripped.tmp";
  const std::string cmd = "strip --strip-debug -o '" + stripped.string() + "' '" + source.string() + "'";
  if (std::system(cmd.c_str()) != 0) {
    std::fprintf(stderr, "bench: '%s' failed\n", cmd.c_str());
    std::exit(1);
  }
  const std::string bytes = testing::readFile(stripped);
  std::filesystem::remove(stripped);
  const std::string find = "\"name\":\"" + source_name + "\"";
  for (std::size_t i = 0; i < count; ++i) {
    const std::string name = copyName(i, source_name.size());
    testing::writeFile(dir / (name + ".so"),
                       testing::withEdit(bytes, find, "\"name\":\"" + name + "\""));
  }
}

struct Stats {
  double median = 0, p99 = 0, min = 0, max = 0;
};

inline Stats statsOf(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  if (samples.empty()) return {};
  auto at = [&](double q) { return samples[std::min(samples.size() - 1, static_cast<std::size_t>(q * samples.size()))]; };
  return {at(0.5), at(0.99), samples.front(), samples.back()};
}

}  // namespace plugboard::bench

#endif  // PLUGBOARD_BENCH_BENCH_SUPPORT_H_

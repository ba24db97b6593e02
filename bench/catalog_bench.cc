// catalog_bench: cataloguing N distinct plugin files, side by side with loading each one.
//
//   build/bench/catalog_bench [--counts 1000,10000] [--runs 5]
//
// The files are copies of build/plugins/hello.so, stripped of debug info, whose manifest
// name is rewritten, so that each is a distinct plugin. Each mode runs in a fresh child process, so that the resident
// memory it adds and the libraries it maps are its own. Reports the median time of --runs
// runs, with min and max, the resident-memory growth and how many plugin files end up
// mapped into the process.
//   catalog: Catalog::scan, which reads each manifest from its ELF section (no dlopen).
//   dlopen:  what a runtime that discovers plugins by loading them does: dlopen each file
//            (RTLD_NOW|RTLD_LOCAL), call its entry point, parse the manifest it returns.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "core/manifests/catalog.h"
#include "plugboard/abi.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Sample {
  double seconds = 0;
  double rss_mb = 0;
  long mapped = 0;
  long found = 0;
};

long rssKb() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

long mappedUnder(const fs::path& dir) {
  std::ifstream in("/proc/self/maps");
  std::vector<std::string> files;
  for (std::string line; std::getline(in, line);) {
    auto pos = line.find(dir.string());
    if (pos != std::string::npos) files.push_back(line.substr(pos));
  }
  std::sort(files.begin(), files.end());
  return std::unique(files.begin(), files.end()) - files.begin();
}

Sample catalogMode(const fs::path& dir) {
  const long before = rssKb();
  const auto start = Clock::now();
  auto catalog = plugboard::core::Catalog::scan({dir});
  const auto end = Clock::now();
  return {std::chrono::duration<double>(end - start).count(), (rssKb() - before) / 1024.0,
          mappedUnder(dir), static_cast<long>(catalog.entries().size())};
}

Sample dlopenMode(const fs::path& dir) {
  const long before = rssKb();
  const auto start = Clock::now();
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<void*> handles;
  long found = 0;
  for (const auto& f : files) {
    void* h = dlopen(f.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) continue;
    handles.push_back(h);
    auto* alias = static_cast<plugboard_entry_fn*>(dlsym(h, PLUGBOARD_ENTRY_ALIAS_NAME));
    if (alias == nullptr) continue;
    const plugboard_plugin_api* api = (*alias)();
    if (plugboard::core::parseManifest(std::string_view(api->manifest, api->manifest_len))) ++found;
  }
  const auto end = Clock::now();
  Sample s{std::chrono::duration<double>(end - start).count(), (rssKb() - before) / 1024.0,
           mappedUnder(dir), found};
  for (void* h : handles) dlclose(h);
  return s;
}

// Runs `mode` in a child process and reads its sample back through a pipe.
template <class Mode>
Sample inChild(Mode mode, const fs::path& dir) {
  int fds[2];
  if (pipe(fds) != 0) std::exit(1);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Sample s = mode(dir);
    ssize_t n = write(fds[1], &s, sizeof s);
    _exit(n == sizeof s ? 0 : 1);
  }
  close(fds[1]);
  Sample s;
  ssize_t n = read(fds[0], &s, sizeof s);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (n != sizeof s) std::cerr << "a child failed\n";
  return s;
}

struct Summary {
  double median, min, max, rss_mb;
  long mapped, found;
};

template <class Mode>
Summary measure(Mode mode, const fs::path& dir, int runs) {
  std::vector<Sample> samples;
  for (int i = 0; i < runs; ++i) samples.push_back(inChild(mode, dir));
  std::vector<double> t;
  std::vector<double> rss;
  for (const auto& s : samples) {
    t.push_back(s.seconds);
    rss.push_back(s.rss_mb);
  }
  std::sort(t.begin(), t.end());
  std::sort(rss.begin(), rss.end());
  return {t[t.size() / 2], t.front(), t.back(), rss[rss.size() / 2], samples.back().mapped,
          samples.back().found};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> counts = {1000, 10000};
  int runs = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--runs") runs = std::stoi(argv[i + 1]);
    if (flag == "--counts") {
      counts.clear();
      std::stringstream list(argv[i + 1]);
      for (std::string item; std::getline(list, item, ',');) counts.push_back(std::stoul(item));
    }
  }
  const fs::path source = plugboard::testing::plugin("hello");
  std::printf("| files | mode | median s | min s | max s | ratio to catalog | RSS growth MB | plugins mapped | plugins found |\n");
  std::printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (std::size_t n : counts) {
    plugboard::testing::TempDir dir;
    plugboard::bench::makeCopies(source, "hello", dir.path(), n);
    const Summary cat = measure(catalogMode, dir.path(), runs);
    const Summary dl = measure(dlopenMode, dir.path(), runs);
    for (const auto& [label, s] : {std::pair{"catalog (no dlopen)", cat}, std::pair{"dlopen each", dl}}) {
      std::printf("| %zu | %s | %.3f | %.3f | %.3f | %.1fx | %.1f | %ld | %ld |\n", n, label,
                  s.median, s.min, s.max, s.median / cat.median, s.rss_mb, s.mapped, s.found);
    }
    std::fflush(stdout);
  }
}

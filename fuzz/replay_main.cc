// fuzz/replay_main.cc: runs a fuzz target's entry point on files, without libFuzzer.
//
//   fuzz_<target>_replay FILE_OR_DIRECTORY...
//
// The normal test suite replays each target's seed corpus (and every crash once found,
// kept there) through it, so that what the fuzzer found stays fixed. A directory's files
// are replayed in name order, not recursively. Exit status 0 when every file was
// replayed; 1 when an argument names nothing readable or a directory holds no file (a
// corpus that went missing must fail the test); a crash ends the process as it would.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

bool replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::fprintf(stderr, "replaying %s (%zu bytes)\n", file.c_str(), bytes.size());
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIRECTORY...\n", argv[0]);
    return 1;
  }
  int replayed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(arg, ec)) {
      for (const auto& e : std::filesystem::directory_iterator(arg, ec)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(arg);
    }
    if (files.empty()) {
      std::fprintf(stderr, "%s: no file to replay\n", argv[i]);
      return 1;
    }
    for (const auto& f : files) {
      if (!replay(f)) {
        std::fprintf(stderr, "%s: cannot read\n", f.c_str());
        return 1;
      }
      ++replayed;
    }
  }
  std::fprintf(stderr, "replayed %d files, no crash\n", replayed);
  return 0;
}

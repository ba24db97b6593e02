// tests/support/completion.h: runs plugboard's bash completion as bash would on a
// command line, for tests of the generated script (tools/plugboard/docs.cc).
#ifndef PLUGBOARD_TESTS_SUPPORT_COMPLETION_H_
#define PLUGBOARD_TESTS_SUPPORT_COMPLETION_H_

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"

namespace plugboard::testing {

// Runs bash's completion function `_plugboard` on the command line `words` (the last is
// the word being completed, "" for a new one) with the script `script` sourced and
// `bin_dir` first in PATH (where `plugboard` is looked up); its stdout holds COMPREPLY, one
// word a line.
inline RunResult complete(const std::filesystem::path& script, const std::filesystem::path& bin_dir,
                          const std::vector<std::string>& words) {
  std::vector<std::string> argv = {
      "bash", "-c",
      "source \"$1\" || exit 1; shift; COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); "
      "_plugboard; printf '%s\\n' \"${COMPREPLY[@]}\"",
      "bash", script.string()};
  argv.insert(argv.end(), words.begin(), words.end());
  RunOptions options;
  const char* path = std::getenv("PATH");
  options.env = {"PATH=" + bin_dir.string() + ":" + (path ? path : "/usr/bin:/bin"),
                 "PLUGBOARD_PLUGINS=", "PLUGBOARD_DEPLOYERS="};
  return run(argv, options);
}

// The non-empty lines of `text`.
inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_COMPLETION_H_

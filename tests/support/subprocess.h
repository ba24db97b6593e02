// tests/support/subprocess.h: runs a program and captures its output, for tests that
// drive the real plugboard binary.
#ifndef PLUGBOARD_TESTS_SUPPORT_SUBPROCESS_H_
#define PLUGBOARD_TESTS_SUPPORT_SUBPROCESS_H_

#include <string>
#include <vector>

namespace plugboard::testing {

struct RunResult {
  int exit_code = -1;  // 128 + signal number when killed by a signal
  std::string out;
  std::string err;
};

// Runs argv[0] (looked up in PATH) with `argv`, feeding `input` on stdin. With `signal`,
// sends it to the child `signal_after_ms` after the start.
RunResult run(const std::vector<std::string>& argv, const std::string& input = "",
              int signal = 0, int signal_after_ms = 0);

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_SUBPROCESS_H_

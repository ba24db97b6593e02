// tests/support/subprocess.h: runs a program and captures its output, for tests that
// drive the real plugboard binary.
#ifndef PLUGBOARD_TESTS_SUPPORT_SUBPROCESS_H_
#define PLUGBOARD_TESTS_SUPPORT_SUBPROCESS_H_

#include <string>
#include <utility>
#include <vector>

namespace plugboard::testing {

struct RunResult {
  int exit_code = -1;  // 128 + signal number when killed by a signal
  std::string out;
  std::string err;
};

// A signal for the child: sent once its stdout or stderr holds `when` (looking past the
// text that set off the signal before it), or, when `when` is empty, `after_ms` after the
// start.
struct SendSignal {
  int signal;
  std::string when;
  int after_ms = 0;
};

struct RunOptions {
  std::string input;                // fed on stdin
  std::vector<SendSignal> signals;  // sent in order
  std::vector<std::string> env;     // NAME=VALUE, added to (or replacing in) the environment
};

// Runs argv[0] (looked up in PATH) with `argv` and waits for it.
RunResult run(const std::vector<std::string>& argv, const RunOptions& options);
inline RunResult run(const std::vector<std::string>& argv, const std::string& input = "") {
  RunOptions options;
  options.input = input;
  return run(argv, options);
}

// The plugboard binary under test with `args`.
RunResult plugboard(std::vector<std::string> args, RunOptions options = {});
inline RunResult plugboard(std::vector<std::string> args, const std::string& input) {
  RunOptions options;
  options.input = input;
  return plugboard(std::move(args), std::move(options));
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_SUBPROCESS_H_

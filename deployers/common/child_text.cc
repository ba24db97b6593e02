#include "deployers/common/child_text.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include <vector>

namespace plugboard::deployer_common {
namespace {

constexpr std::size_t kStderrTailLines = 20;

}  // namespace

std::string signalName(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "unknown signal";
}

std::string describeStatus(int status, const Settings& s, bool exit_code_is_signal) {
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    std::string out = "exited with code " + std::to_string(code);
    if (exit_code_is_signal && code > 128 && code < 128 + 65) {
      out += " (the plugin crashed: killed by signal " + std::to_string(code - 128) + ", " +
             signalName(code - 128) + ")";
    }
    return out;
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    std::string out =
        "crashed: killed by signal " + std::to_string(sig) + " (" + signalName(sig) + ")";
    if (sig == SIGXCPU && s.cpu_seconds) {
      out += ": it used up its CPU time (option 'cpu_time' allows " +
             std::to_string(*s.cpu_seconds) + "s)";
    } else if (s.memory && (sig == SIGSEGV || sig == SIGABRT || sig == SIGBUS)) {
      // An allocation that fails under RLIMIT_AS often ends this way (a null pointer used,
      // an exception nobody catches); stderr's tail says more when the host saw it.
      out += "; option 'memory' limits its address space to " + s.memory_text +
             ", which it may have run out of";
    }
    return out;
  }
  return "ended with wait status " + std::to_string(status);
}

std::string stderrTail(std::string_view text, bool cut) {
  if (cut) {
    const auto nl = text.find('\n');
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  }
  std::vector<std::string> lines;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string line(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    for (char& c : line) {
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (!line.empty()) lines.push_back(std::move(line));
  }
  if (lines.size() > kStderrTailLines) lines.erase(lines.begin(), lines.end() - kStderrTailLines);
  std::string tail;
  for (const auto& l : lines) tail += (tail.empty() ? "" : " | ") + l;
  return tail;
}

}  // namespace plugboard::deployer_common

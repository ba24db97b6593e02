#include "tests/support/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <stdexcept>
#include <string_view>

#include "tests/support/paths.h"

extern char** environ;

namespace plugboard::testing {

namespace {

// `environ` with `extra` (NAME=VALUE) added, replacing a variable of the same name.
std::vector<std::string> environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view var(*e);
    const auto name = var.substr(0, var.find('=') + 1);
    bool replaced = false;
    for (const auto& x : extra) replaced = replaced || x.starts_with(name);
    if (!replaced) env.emplace_back(var);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

}  // namespace

RunResult plugboard(std::vector<std::string> args, RunOptions options) {
  args.insert(args.begin(), binary().string());
  return run(args, options);
}

RunResult run(const std::vector<std::string>& argv, const RunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::string& input = options.input;
  std::size_t next_signal = 0;
  // Where the search for the next signal's text starts, in stdout and stderr: after the
  // text that set off the one before.
  std::size_t searched_out = 0, searched_err = 0;
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
    throw std::runtime_error("pipe failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings = environment(options.env);
  std::vector<char*> env;
  for (auto& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(),
                        options.env.empty() ? environ : env.data());
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    close(err[0]);
    throw std::runtime_error("cannot start " + argv[0]);
  }
  signal(SIGPIPE, SIG_IGN);
  if (!input.empty()) {
    ssize_t ignored = write(in[1], input.data(), input.size());
    (void)ignored;
  }
  close(in[1]);

  RunResult result;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  while (open_fds > 0) {
    int wait_ms = -1;
    while (next_signal < options.signals.size()) {
      const SendSignal& next = options.signals[next_signal];
      bool due = false;
      if (!next.when.empty()) {
        for (auto [text, from] : {std::pair{&result.out, &searched_out}, {&result.err, &searched_err}}) {
          const auto at = text->find(next.when, *from);
          if (at != std::string::npos) {
            *from = at + next.when.size();
            due = true;
            break;
          }
        }
      } else {
        const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::steady_clock::now() - start).count();
        due = elapsed >= next.after_ms;
        if (!due) wait_ms = static_cast<int>(next.after_ms - elapsed);
      }
      if (!due) break;
      kill(pid, next.signal);
      ++next_signal;
    }
    if (poll(fds, 2, wait_ms) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[65536];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace plugboard::testing

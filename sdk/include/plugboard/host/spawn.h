// plugboard/host/spawn.h: starting a plugin's child process, for deployers that run
// plugins out of process (docs/deployers.md, "The host kit").
//
// spawn() starts a program with fork and execve, its stdin, stdout and stderr on pipes
// (or the protocol channel on descriptors 3 and 4), in a process group of its own, in a
// working directory and under resource limits. The helpers around it find programs,
// build the child's environment, and run a short command to its end.
// Free functions; thread-safe (spawn() may run while other threads hold locks: the child
// makes only async-signal-safe calls before execve). An Fd is not thread-safe.
#ifndef PLUGBOARD_HOST_SPAWN_H_
#define PLUGBOARD_HOST_SPAWN_H_

#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plugboard/host/expected.h"

namespace plugboard::host {

// Owns one file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// A pipe {read end, write end}, both close-on-exec and above 2, so that dup2() onto 0-2
// in a child never lands on another end.
Expected<std::pair<Fd, Fd>> makePipe();

// One resource limit of the child. An unprivileged process cannot raise its hard limit:
// both values are kept under this process's own hard limit.
struct Limit {
  int resource = RLIMIT_AS;  // RLIMIT_AS, RLIMIT_CPU, RLIMIT_NOFILE ...
  rlim_t soft = RLIM_INFINITY;
  rlim_t hard = RLIM_INFINITY;
  std::string what;   // names it in messages, e.g. "option 'memory'"
  std::string shown;  // its value as the user wrote it, e.g. "256M"
};

struct SpawnOptions {
  std::string program;            // what is run, absolute
  std::vector<std::string> argv;  // argv[0] first
  std::vector<std::string> env;   // the whole environment, NAME=value (environmentWith())
  std::string cwd;                // empty: this process's
  std::string cwd_what;           // names cwd's source in messages, e.g. "option 'cwd'"
  std::vector<Limit> limits;
  // The channel on descriptors 3 (the runtime's frames) and 4 (the plugin's) instead of
  // stdin and stdout, which are then /dev/null and the stderr pipe: a container engine
  // passes descriptors through to the plugin (and kProtocolFdsVariable names them).
  bool channel_on_fds_3_4 = false;
  // A descriptor of this process that the child gets as descriptor `pass_fd_as` (3, or 5
  // with the channel on 3 and 4, or higher), for a file that only this process can name,
  // such as a memfd: the child opens it as /proc/self/fd/<pass_fd_as>. -1: none.
  int pass_fd = -1;
  int pass_fd_as = -1;
};

struct Spawned {
  pid_t pid = -1;
  Fd in, out, err;  // the child's stdin (ours to write, non-blocking), stdout and stderr
};

// Starts options.program. The error says what failed: a pipe or fork, or in the child
// setting up descriptors, changing directory, a limit, or execve itself.
Expected<Spawned> spawn(const SpawnOptions& options);

// This process's environment with `added` (each replacing a variable of the same name).
std::vector<std::string> environmentWith(const std::map<std::string, std::string>& added);

// Runs argv[0] (absolute) with `argv`, stdin and stdout on /dev/null and stderr on this
// process's, and waits for it; kills it after `timeout`. Returns its exit code, or -1
// when it could not run, was killed or did not end in time.
int runToEnd(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

// Sets SIGPIPE to SIG_IGN unless the process chose its own disposition, so that a write
// to a dead child fails with EPIPE instead of ending the runtime. For a deployer's setUp().
void ignoreSigpipe();

// `path_or_name` when it is an executable file's path (made absolute), else the first
// executable of that name in PATH; nullopt when there is none.
std::optional<std::string> findExecutable(const std::string& path_or_name);

// The directory of the module (the deployer .so, or the program) this code is linked
// into, symbolic links resolved; empty if unknown.
std::string moduleDirectory();

}  // namespace plugboard::host

#endif  // PLUGBOARD_HOST_SPAWN_H_

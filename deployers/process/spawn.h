// deployers/process/spawn.h: starting one plugin's child process with fork and execve.
// Shared by the process and python deployers (library plugboard_child_process).
//
// A Launch says how to start one plugin's child (a program, its argv, extra environment
// and a label for messages); spawn() starts it with its stdin, stdout
// and stderr on pipes, in a process group of its own, under the limits of its Settings.
// Free functions; thread-safe (spawn() may run while other threads hold locks: the child
// makes only async-signal-safe calls before execve). An Fd is not thread-safe.
#ifndef PLUGBOARD_DEPLOYERS_PROCESS_SPAWN_H_
#define PLUGBOARD_DEPLOYERS_PROCESS_SPAWN_H_

#include <sys/types.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <plugboard/sdk.hpp>

#include "deployers/process/settings.h"

namespace plugboard::process_deployer {

// How to start one plugin's child; built once per open(), shared by its restarts.
struct Launch {
  std::string label;     // names the plugin in messages until its manifest is known
  std::string log_name;  // names it in logged stderr lines: "[log_name] stderr: ..."
  std::string deployer;  // in messages: "plugin 'x' (deployer) crashed ..."
  std::string program;   // what is run, absolute
  Settings settings;
  std::vector<std::string> argv;  // argv[0] is the program
  std::vector<std::string> env;   // NAME=value: the runtime's environment plus extra
  plugboard::Logger log;
};

// A launch of `program` with `args` after argv[0], in the runtime's environment with
// `extra_env` and then option 'env' added (each replacing a variable of the same name).
std::shared_ptr<const Launch> makeLaunch(std::string label, std::string log_name,
                                         std::string deployer, std::string program,
                                         std::vector<std::string> args,
                                         const std::map<std::string, std::string>& extra_env,
                                         Settings settings, plugboard::Logger log);

// The process deployer's launch: plugboard-host serving the plugin .so `plugin`.
std::shared_ptr<const Launch> makeHostLaunch(std::string plugin, std::string host,
                                             Settings settings, plugboard::Logger log);

// Sets SIGPIPE to SIG_IGN unless the runtime chose its own disposition, so that a write
// to a dead child fails with EPIPE instead of ending the runtime. For a deployer's setUp().
void ignoreSigpipe();

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
// in the child never lands on another end.
std::pair<Fd, Fd> makePipe();

struct Spawned {
  pid_t pid = -1;
  Fd in, out, err;  // the child's stdin (ours to write), stdout and stderr (ours to read)
};

// Starts the program with fork and execve. Throws std::runtime_error saying what failed
// (in the child: setting it up, changing directory, a limit, or execve itself).
Spawned spawn(const Launch& launch);

}  // namespace plugboard::process_deployer

#endif  // PLUGBOARD_DEPLOYERS_PROCESS_SPAWN_H_

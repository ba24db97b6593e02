// deployers/process/spawn.h: starting one plugboard-host child with fork and execve.
//
// A Launch says how to start one plugin's child; spawn() starts it with its stdin, stdout
// and stderr on pipes, in a process group of its own, under the limits of its Settings.
// Free functions; thread-safe (spawn() may run while other threads hold locks: the child
// makes only async-signal-safe calls before execve). An Fd is not thread-safe.
#ifndef PLUGBOARD_DEPLOYERS_PROCESS_SPAWN_H_
#define PLUGBOARD_DEPLOYERS_PROCESS_SPAWN_H_

#include <sys/types.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <plugboard/sdk.hpp>

#include "deployers/process/settings.h"

namespace plugboard::process_deployer {

// How to start one plugin's child; built once per open(), shared by its restarts.
struct Launch {
  std::string plugin;  // the .so, absolute
  std::string host;    // plugboard-host, absolute
  Settings settings;
  std::vector<std::string> argv;
  std::vector<std::string> env;  // NAME=value: the runtime's environment plus option 'env'
  plugboard::Logger log;
};

std::shared_ptr<const Launch> makeLaunch(std::string plugin, std::string host, Settings settings,
                                         plugboard::Logger log);

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

// Starts the host with fork and execve. Throws std::runtime_error saying what failed
// (in the child: setting it up, changing directory, a limit, or execve itself).
Spawned spawn(const Launch& launch);

}  // namespace plugboard::process_deployer

#endif  // PLUGBOARD_DEPLOYERS_PROCESS_SPAWN_H_

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

#include <atomic>
#include <functional>
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

  // For programs that run the plugin elsewhere, such as a container engine
  // (deployers/container/container.cc):
  // the argv of the n-th start (1, 2, ...), when set, instead of `argv`;
  std::function<std::vector<std::string>(unsigned start)> argv_for_start;
  // called on the child's reader thread after it ended other than by exiting 0 (killed,
  // crashed, failed to start), with its start number: e.g. to remove what it left behind.
  // The child's owner waits for it when it destroys the child.
  std::function<void(unsigned start)> after_unclean_end;
  // the program's exit code 128+N means the plugin in it was killed by signal N;
  bool exit_code_is_signal = false;
  // the channel on descriptors 3 (the runtime's frames) and 4 (the plugin's) instead of
  // stdin and stdout, which are then /dev/null and the stderr pipe: a container engine
  // passes descriptors through to the plugin, and would relay stdin and stdout itself.
  bool channel_on_fds_3_4 = false;
  std::shared_ptr<std::atomic<unsigned>> starts = std::make_shared<std::atomic<unsigned>>(0);
};

// A launch of `program` with `args` after argv[0], in the runtime's environment with
// `extra_env` and then option 'env' added (each replacing a variable of the same name).
std::shared_ptr<Launch> makeLaunch(std::string label, std::string log_name, std::string deployer,
                                   std::string program, std::vector<std::string> args,
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

// Starts the program with `argv` (launch.argv, or what argv_for_start made) with fork and
// execve. Throws std::runtime_error saying what failed (in the child: setting it up,
// changing directory, a limit, or execve itself).
Spawned spawn(const Launch& launch, const std::vector<std::string>& argv);

// Runs argv[0] (absolute) with `argv`, stdin and stdout on /dev/null and stderr on the
// runtime's, and waits for it; kills it after `timeout`. Returns its exit code, or -1
// when it could not run, was killed or did not end in time.
int runToEnd(const std::vector<std::string>& argv, Millis timeout);

}  // namespace plugboard::process_deployer

#endif  // PLUGBOARD_DEPLOYERS_PROCESS_SPAWN_H_

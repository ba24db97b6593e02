// deployers/common/launch.h: how a deployer of child processes starts one plugin's child.
// Shared by the process, python and container deployers (library
// plugboard_deployer_common); the spawning itself is the host kit's
// (plugboard/host/spawn.h).
//
// A Launch says how to start one plugin's child (a program, its argv, its environment,
// the options' Settings and a label for messages); spawnChild() starts it. Free functions;
// thread-safe. A Launch is immutable once built, except `starts`.
#ifndef PLUGBOARD_DEPLOYERS_COMMON_LAUNCH_H_
#define PLUGBOARD_DEPLOYERS_COMMON_LAUNCH_H_

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <plugboard/host/expected.h>
#include <plugboard/host/spawn.h>
#include <plugboard/sdk.hpp>

#include "deployers/common/settings.h"
#include "deployers/common/wire.h"

namespace plugboard::deployer_common {

using host::Fd;
using host::Spawned;

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
  // called once the n-th start's program runs, with its pid (also its process group);
  std::function<void(unsigned start, pid_t pid)> after_spawn;
  // called on the child's reader thread after it ended, with its start number and whether
  // it ended cleanly (exited 0 after `shutdown`; not killed, crashed or failed to start):
  // e.g. to remove what it left behind. The child's owner waits for it when it destroys
  // the child.
  std::function<void(unsigned start, bool clean)> after_end;
  // the program's exit code 128+N means the plugin in it was killed by signal N;
  bool exit_code_is_signal = false;
  // the channel on descriptors 3 and 4 instead of stdin and stdout (SpawnOptions).
  bool channel_on_fds_3_4 = false;
  // a descriptor each child gets as descriptor 3 (SpawnOptions::pass_fd), when set.
  std::shared_ptr<const Fd> passed;
  // what each child speaks, when set; else protocol v1 (makeV1Wire).
  std::function<std::unique_ptr<Wire>()> make_wire;
  std::shared_ptr<std::atomic<unsigned>> starts = std::make_shared<std::atomic<unsigned>>(0);
};

// A launch of `program` with `args` after argv[0], in the runtime's environment with
// `extra_env` and then option 'env' added (each replacing a variable of the same name).
std::shared_ptr<Launch> makeLaunch(std::string label, std::string log_name, std::string deployer,
                                   std::string program, std::vector<std::string> args,
                                   const std::map<std::string, std::string>& extra_env,
                                   Settings settings, plugboard::Logger log);

// The process deployer's launch: plugboard-host serving the plugin .so `plugin`. A plugin
// named by one of this process's descriptors (/proc/self/fd/N: the runtime's private copy
// in memory) is opened here and handed to each child as its descriptor 3, which it loads
// as /proc/self/fd/3. Throws std::runtime_error when that descriptor cannot be opened.
std::shared_ptr<const Launch> makeHostLaunch(std::string plugin, std::string host,
                                             Settings settings, plugboard::Logger log);

// Throws std::runtime_error with the refusal ("FILE: refused: <rule>; <fix>") when `st`,
// a check of plugboard/host/trust.h on `file`, refused it. A file that is missing or
// cannot be read (kIo) is left to whoever runs it to report, as before the check.
void requireTrusted(const std::string& file, const host::Status& st);

// Starts the launch's program with `argv` (launch.argv, or what argv_for_start made)
// under its settings' limits and working directory. Throws std::runtime_error saying what
// failed (host::spawn()'s error, naming the option at fault).
Spawned spawnChild(const Launch& launch, const std::vector<std::string>& argv);

}  // namespace plugboard::deployer_common

#endif  // PLUGBOARD_DEPLOYERS_COMMON_LAUNCH_H_

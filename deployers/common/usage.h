// deployers/common/usage.h: how many descriptors and threads a child process holds, read
// from /proc/<pid>/ between calls (docs/deployers.md, option 'restart_at_open_files').
// Shared by the deployers of child processes (library plugboard_deployer_common).
//
// Each count costs one stat() of a /proc directory (about 5 µs): the size of
// /proc/<pid>/fd is its number of entries since Linux 6.2 (before, the entries are counted,
// about 10 times slower), and the link count of /proc/<pid>/task is 2 plus the number of
// threads. Free functions; thread-safe. The caller must keep `pid` from being reaped
// while it reads, or the numbers may be another process's.
#ifndef PLUGBOARD_DEPLOYERS_COMMON_USAGE_H_
#define PLUGBOARD_DEPLOYERS_COMMON_USAGE_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace plugboard::deployer_common {

// The open descriptors of process `pid`; nullopt if it cannot be read (it has exited).
std::optional<std::uint64_t> openDescriptors(pid_t pid);

// The threads of process `pid`; nullopt if it cannot be read (it has exited).
std::optional<std::uint64_t> threadCount(pid_t pid);

}  // namespace plugboard::deployer_common

#endif  // PLUGBOARD_DEPLOYERS_COMMON_USAGE_H_

// plugboard/host/owner.h: who made something that must not outlive its maker (a private
// directory, a container), recorded so that a later process can tell whether the maker is
// gone, and the clean-up of directories whose maker is gone. Shared by the runtime (serve's
// runtime directories, run's scratch directory) and the deployers (script and token
// directories, containers).
//
// A record is "<pid> <start> <boot> <pidns>": the process id, its start time (field 22 of
// /proc/<pid>/stat, so that a reused pid is not taken for the maker), the boot id and the
// pid namespace. A maker is gone only when that is known: another boot, or, in this pid
// namespace, no process with that id and start time. A record of another pid namespace (a
// container sharing the temp directory or the container store) or one that cannot be read
// is "unknown", and what it owns is left alone: removing a live run's files breaks it,
// keeping a dead one's costs disk space only. Free functions; thread-safe.
#ifndef PLUGBOARD_HOST_OWNER_H_
#define PLUGBOARD_HOST_OWNER_H_

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "plugboard/host/expected.h"

namespace plugboard::host {

// This process's record.
const std::string& ownerRecord();
// "<pid>.<start>" of this process: short enough for a container's name, for a cheap first
// look (ownerTagAlive()) before the record is read.
const std::string& ownerTag();

enum class Liveness { kAlive, kGone, kUnknown };
Liveness ownerLiveness(std::string_view record);
// Whether the process of `tag` ("<pid>.<start>") may be alive in this pid namespace: false
// only when no process has that id and start time here.
bool ownerTagAlive(std::string_view tag);

// A new directory `parent`/`prefix`XXXXXX, mode 0700, holding the file `.owner` with this
// process's record. The error names the directory.
Expected<std::filesystem::path> makeOwnedDirectory(const std::filesystem::path& parent,
                                                   std::string_view prefix);

// Removes the directories `parent`/`prefix`* of this user whose maker is gone (real
// directories, not links, with a readable `.owner`), and returns them.
std::vector<std::filesystem::path> removeDeadDirectories(const std::filesystem::path& parent,
                                                         std::string_view prefix);

}  // namespace plugboard::host

#endif  // PLUGBOARD_HOST_OWNER_H_

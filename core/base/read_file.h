// core/base/read_file.h: reading a file a user names (a workflow, args, a parameter file, a
// configuration, a registry, a token) as text, refusing what is not one.
//
// Every file the CLI or the runtime reads whole goes through here, so that each refuses the
// same things with the same words: a path that is not a regular file (a directory, a
// device such as /dev/zero, a FIFO, a socket) and a file larger than the limit, both named
// with the file and what it was read as. The file is opened without blocking (a FIFO does
// not hang the open), checked on its descriptor (so a swap after the check changes
// nothing) and read up to the limit only, however large it grows meanwhile.
//
// Thread-safety: free functions, safe from any thread.
#ifndef PLUGBOARD_CORE_BASE_READ_FILE_H_
#define PLUGBOARD_CORE_BASE_READ_FILE_H_

#include <cstddef>
#include <filesystem>
#include <string>

#include "core/base/defaults.h"
#include "core/base/expected.h"

namespace plugboard::core {

// The text of `file`, read as `what` ("workflow file", "args file", ...). Errors read
// "<file>: cannot read the <what>: <why>" and have Error::Code::kIo.
Expected<std::string> readTextFile(const std::filesystem::path& file, const std::string& what,
                                   std::size_t limit = defaults::kMaxFileBytes);

// The same for a descriptor already opened (and checked) by the caller; reads from where
// the descriptor stands, without closing it.
Expected<std::string> readOpenedFile(int fd, const std::filesystem::path& file,
                                     const std::string& what,
                                     std::size_t limit = defaults::kMaxFileBytes);

// The text of `name` read beneath the directory `dir`: a relative name from `dir`, an
// absolute one only when it lies in `dir`. What the name resolves to (`..` and symbolic
// links followed) must stay beneath `dir`; the kernel checks it while it opens the file
// (openat2's RESOLVE_BENEATH), so a link swapped in meanwhile changes nothing. Where
// openat2 is missing, the file is opened from `dir` and the path of the descriptor opened
// (/proc/self/fd) is checked instead. A name that leads out of `dir` errors with
// Error::Code::kUntrusted: "<name>: cannot read the <what>: it is outside <dir>".
Expected<std::string> readTextFileBeneath(const std::filesystem::path& dir,
                                          const std::filesystem::path& name,
                                          const std::string& what,
                                          std::size_t limit = defaults::kMaxFileBytes);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_BASE_READ_FILE_H_

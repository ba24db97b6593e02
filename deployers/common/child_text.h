// deployers/common/child_text.h: how a child's end is told in messages: its wait status
// and the tail of its stderr (docs/deployers.md, "When a plugin crashes, hangs or breaks
// the protocol"). Part of library plugboard_deployer_common. Free functions; thread-safe.
#ifndef PLUGBOARD_DEPLOYERS_COMMON_CHILD_TEXT_H_
#define PLUGBOARD_DEPLOYERS_COMMON_CHILD_TEXT_H_

#include <string>
#include <string_view>

#include "deployers/common/settings.h"

namespace plugboard::deployer_common {

// "SIGSEGV" for 11.
std::string signalName(int sig);

// How a child ended, from its wait status: "exited with code 7", "crashed: killed by signal
// 11 (SIGSEGV)", with what its options `s` explain (used-up cpu_time; a memory limit it may
// have run out of). `exit_code_is_signal`: an exit code 128+N means killed by signal N.
std::string describeStatus(int status, const Settings& s, bool exit_code_is_signal);

// The last lines (at most 20) of `text`, the end of a child's stderr, on one line with
// " | " between them. `cut` says the text starts in the middle of a line, which is dropped.
std::string stderrTail(std::string_view text, bool cut);

}  // namespace plugboard::deployer_common

#endif  // PLUGBOARD_DEPLOYERS_COMMON_CHILD_TEXT_H_

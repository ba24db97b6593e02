// tools/plugboard-host/allocation.h: allocation failures in plugboard-host.
//
// operator new calls the handler watchAllocations() installs when memory runs out (most
// often under the runtime's `memory` limit, RLIMIT_AS): it marks the thread, so that the
// call running on it is answered with "out_of_memory", says so once on stderr (the tail
// the runtime quotes if the process then dies), and throws std::bad_alloc as the default
// does. The mark is per thread: each pool thread reads its own for its call.
#ifndef PLUGBOARD_TOOLS_PLUGBOARD_HOST_ALLOCATION_H_
#define PLUGBOARD_TOOLS_PLUGBOARD_HOST_ALLOCATION_H_

namespace plugboard::host_tool {

// Installs the handler; main's thread, once, before the plugin loads.
void watchAllocations();
// This thread's mark: set by a failed allocation since the last clear.
bool allocationFailedHere();
void clearAllocationFailure();
void markAllocationFailure();

}  // namespace plugboard::host_tool

#endif  // PLUGBOARD_TOOLS_PLUGBOARD_HOST_ALLOCATION_H_

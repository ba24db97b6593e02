// tools/plugboard-host/allocation.cc: see allocation.h.
#include "allocation.h"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <new>

namespace plugboard::host_tool {
namespace {

thread_local bool t_allocation_failed = false;
std::atomic<bool> g_allocation_failure_told{false};
char g_allocation_failure_line[200];

void onAllocationFailure() {
  t_allocation_failed = true;
  if (!g_allocation_failure_told.exchange(true)) {
    [[maybe_unused]] ssize_t ignored =
        ::write(STDERR_FILENO, g_allocation_failure_line, std::strlen(g_allocation_failure_line));
  }
  throw std::bad_alloc();
}

}  // namespace

void watchAllocations() {
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    std::snprintf(g_allocation_failure_line, sizeof g_allocation_failure_line,
                  "plugboard-host: out of memory: an allocation failed under the address-space "
                  "limit of %llu bytes\n",
                  static_cast<unsigned long long>(as.rlim_cur));
  } else {
    std::snprintf(g_allocation_failure_line, sizeof g_allocation_failure_line,
                  "plugboard-host: out of memory: an allocation failed\n");
  }
  std::set_new_handler(&onAllocationFailure);
}

bool allocationFailedHere() { return t_allocation_failed; }
void clearAllocationFailure() { t_allocation_failed = false; }
void markAllocationFailure() { t_allocation_failed = true; }

}  // namespace plugboard::host_tool

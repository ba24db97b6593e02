// tests/support/eventually.h: waiting for a condition another process brings about.
#ifndef PLUGBOARD_TESTS_SUPPORT_EVENTUALLY_H_
#define PLUGBOARD_TESTS_SUPPORT_EVENTUALLY_H_

#include <chrono>
#include <thread>

namespace plugboard::testing {

// True as soon as `check()` is, asking every `step` for up to `within`; false if it never
// was. For state a test cannot be told about (a file picked up by a watcher, a plugin
// list that changes), not for a time to pass: the limit only keeps a broken build from
// hanging.
template <class Check>
bool eventually(Check check, std::chrono::milliseconds within = std::chrono::seconds(10),
                std::chrono::milliseconds step = std::chrono::milliseconds(10)) {
  for (auto until = std::chrono::steady_clock::now() + within;
       std::chrono::steady_clock::now() < until;) {
    if (check()) return true;
    std::this_thread::sleep_for(step);
  }
  return check();
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_EVENTUALLY_H_

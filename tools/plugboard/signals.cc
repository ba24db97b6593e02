#include "tools/plugboard/signals.h"

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

namespace plugboard::cli {

void CancelTarget::cancel() {
  std::lock_guard lock(mu);
  cancelled = true;
  checking.cancel();
  if (cancel_run) cancel_run();
}

void CancelTarget::setRunner(core::Runner& r) {
  std::lock_guard lock(mu);
  cancel_run = [&r] { r.cancel(); };
  if (cancelled) cancel_run();
}

void CancelTarget::setEngine(core::Engine& e) {
  std::lock_guard lock(mu);
  cancel_run = [&e] { e.cancel(); };
  if (cancelled) cancel_run();
}

void CancelTarget::setDeployers(core::DeployerSet& d) {
  std::lock_guard lock(mu);
  deployers = &d;
}

bool CancelTarget::wasCancelled() {
  std::lock_guard lock(mu);
  return cancelled;
}

void CancelTarget::exitNow(int status) {
  {
    std::lock_guard lock(mu);
    if (deployers != nullptr) deployers->abandon();
  }
  std::_Exit(status);
}

void CancelTarget::release() {
  std::lock_guard lock(mu);
  cancel_run = nullptr;
  deployers = nullptr;
}

std::shared_ptr<CancelTarget> handleSignals(const char* cancelling, bool stop_at_once) {
  auto target = std::make_shared<CancelTarget>();
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set, target, cancelling, stop_at_once] {
    int signal = 0;
    sigwait(&set, &signal);
    const char* what = signal == SIGINT ? "interrupted" : "terminated";
    if (stop_at_once) {
      std::fprintf(stderr, "\nplugboard: %s: stopping\n", what);
      target->exitNow(kExitCancelled);
    }
    std::fprintf(stderr, "\nplugboard: %s: cancelling %s (again to stop at once)\n", what,
                 cancelling);
    target->cancel();
    sigwait(&set, &signal);
    target->exitNow(kExitCancelled);
  }).detach();
  return target;
}

}  // namespace plugboard::cli

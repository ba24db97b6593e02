#include "tools/plugboard/signals.h"

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "tools/plugboard/terminal.h"

namespace plugboard::cli {

void CancelTarget::cancel() {
  std::lock_guard lock(mu);
  cancelled = true;
  checking.cancel();
  if (cancel_run) cancel_run();
}

void CancelTarget::resume() {
  std::lock_guard lock(mu);
  if (resume_run) resume_run();
}

void CancelTarget::setEngine(core::Engine& e) {
  std::lock_guard lock(mu);
  cancel_run = [&e] { e.cancel(); };
  resume_run = [&e] { e.resume(); };
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
  resume_run = nullptr;
  deployers = nullptr;
}

std::shared_ptr<CancelTarget> handleSignals(const char* cancelling, bool stop_at_once) {
  auto target = std::make_shared<CancelTarget>();
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set, target, cancelling, stop_at_once] {
    int signal = 0;
    // SIGUSR1 resumes suspended nodes and is otherwise ignored.
    auto next = [&] {
      do {
        sigwait(&set, &signal);
        if (signal == SIGUSR1) target->resume();
      } while (signal == SIGUSR1);
    };
    next();
    const std::string what = signal == SIGINT ? "interrupted" : "terminated";
    // On its own line: the terminal echoed ^C where the cursor was (a live display's
    // drawing erases the echo and draws its lines again below the message).
    const auto say = [](const std::string& text) {
      printAbove(liveUp() ? text : "\n" + text);
    };
    if (stop_at_once) {
      say("plugboard: " + what + ": stopping\n");
      target->exitNow(kExitCancelled);
    }
    say("plugboard: " + what + ": cancelling " + cancelling + " (again to stop at once)\n");
    target->cancel();
    next();
    endLive();  // the lines stay as they are; the shell's prompt comes below them
    target->exitNow(kExitCancelled);
  }).detach();
  return target;
}

}  // namespace plugboard::cli

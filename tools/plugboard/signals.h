// tools/plugboard/signals.h: Ctrl-C and SIGTERM for the commands that start plugins (run,
// validate, exec), so that nothing a plugin's start made outlives the command.
#ifndef PLUGBOARD_TOOLS_PLUGBOARD_SIGNALS_H_
#define PLUGBOARD_TOOLS_PLUGBOARD_SIGNALS_H_

#include <functional>
#include <memory>
#include <mutex>

#include "core/runtime/exports.h"

namespace plugboard::cli {

inline constexpr int kExitCancelled = 130;

// What the signal thread cancels: the starts of the workflow's check, then the engine, and
// the deployers whose plugins it removes before a second signal ends the process. The
// thread outlives them (it is detached), so the engine and deployers are taken away under
// the lock before they are destroyed: a signal that comes as the command ends cancels
// nothing rather than an engine being destroyed.
struct CancelTarget {
  std::mutex mu;
  core::StartControl checking;             // the starts made while the workflow is checked
  bool cancelled = false;                  // guarded by mu
  std::function<void()> cancel_run;        // guarded by mu: Engine::cancel
  std::function<void()> resume_run;        // guarded by mu: Engine::resume
  core::DeployerSet* deployers = nullptr;  // guarded by mu

  void cancel();
  // SIGUSR1: what `argo resume` does to a workflow's suspended nodes.
  void resume();
  // A run made after a signal came runs cancelled: its steps end Skipped, not run.
  void setEngine(core::Engine& e);
  void setDeployers(core::DeployerSet& d);
  bool wasCancelled();
  // Exits with `status` after the deployers removed what their plugins left (containers,
  // files): nothing outlives the command. Calls in flight are not waited for.
  [[noreturn]] void exitNow(int status);
  void release();
};

// Turns SIGINT and SIGTERM into cancel() (and SIGUSR1 into resume()) on a thread of its own; a second signal (or the
// first, with `stop_at_once`) ends the process, after the deployers removed what their
// plugins left. Call release() on the result before the engine or the deployers are
// destroyed. REQUIRES: called before any other thread starts.
// `cancelling` names what is cancelled in the line the first signal prints ("the run").
std::shared_ptr<CancelTarget> handleSignals(const char* cancelling, bool stop_at_once = false);

}  // namespace plugboard::cli

#endif  // PLUGBOARD_TOOLS_PLUGBOARD_SIGNALS_H_

// tools/plugboard/progress.h: how `plugboard run` shows steps while they run.
//
// On a terminal: one line per step (phase, elapsed, message), redrawn in place. Otherwise:
// a plain log line for every change. Called on the runner's thread only.
#ifndef PLUGBOARD_TOOLS_PROGRESS_H_
#define PLUGBOARD_TOOLS_PROGRESS_H_

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/runner.h"

namespace plugboard::cli {

class ProgressDisplay : public core::RunObserver {
 public:
  // `steps` in file order; `live` selects the in-place terminal display.
  ProgressDisplay(const std::vector<std::string>& steps, bool live, std::FILE* out);

  void stepChanged(const core::StepStatus& step) override;
  void tick() override;
  // Draws the final state (terminal) and ends the display.
  void close();

 private:
  void redraw();
  std::string lineFor(const core::StepStatus& s) const;

  std::vector<core::StepStatus> steps_;
  std::size_t id_width_ = 4;
  bool live_;
  bool drawn_ = false;
  std::FILE* out_;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace plugboard::cli

#endif  // PLUGBOARD_TOOLS_PROGRESS_H_

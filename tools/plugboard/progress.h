// tools/plugboard/progress.h: how `plugboard run` shows steps while they run.
//
// On a terminal, for a workflow of up to kMaxStepLines steps: one line per step (phase,
// elapsed, message), redrawn in place on every change. For a larger one: a line counting
// the steps in each phase and a line for each of the first kMaxStepLines running steps,
// redrawn at most every 200 ms, so that a change costs the same whatever the number of
// steps. Otherwise: a plain log line for every change. Called on the engine's thread only.
#ifndef PLUGBOARD_TOOLS_PROGRESS_H_
#define PLUGBOARD_TOOLS_PROGRESS_H_

#include <array>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/runtime/exports.h"

namespace plugboard::cli {

// The local time of day, "14:03:59": how log lines of a run begin.
std::string timeOfDay();

class ProgressDisplay : public core::RunObserver {
 public:
  static constexpr std::size_t kMaxStepLines = 30;

  // `steps` in file order; `live` selects the in-place terminal display.
  ProgressDisplay(const std::vector<std::string>& steps, bool live, std::FILE* out);

  void stepChanged(const core::StepStatus& step) override;
  void tick() override;
  // Draws the final state (terminal) and ends the display.
  void close();

 private:
  void redraw();
  std::vector<std::string> lines() const;
  std::string lineFor(const core::StepStatus& s) const;
  std::string countsLine() const;

  bool live_;
  bool compact_ = false;  // live, with more than kMaxStepLines steps
  std::FILE* out_;
  std::size_t id_width_ = 4;
  std::unordered_map<std::string, std::size_t> index_;  // live: position by id
  std::vector<core::StepStatus> steps_;                 // live, not compact: every step
  std::vector<core::StepPhase> phases_;                 // compact: each step's phase
  std::array<std::size_t, 7> counts_{};                 // compact: steps by phase
  std::map<std::size_t, core::StepStatus> running_;     // compact: the Running steps
  std::size_t drawn_lines_ = 0;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace plugboard::cli

#endif  // PLUGBOARD_TOOLS_PROGRESS_H_

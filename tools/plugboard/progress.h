// tools/plugboard/progress.h: how `plugboard run` shows steps while they run.
//
// On a terminal, for a workflow of up to kMaxStepLines steps: one line per step (phase,
// elapsed, the deployer that ran it, message or output parameters), redrawn in place on
// every change (tools/plugboard/terminal.h draws it). For a larger one: a line counting
// the steps in each phase and a line for each of the first kMaxStepLines running steps,
// redrawn at most every 200 ms, so that a change costs the same whatever the number of
// steps. Otherwise: a plain log line for every change, a step's plugin, deployer and
// outputs on the line of its end. Called on the engine's thread only.
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

// A step's output parameters (name, value pairs) as one line:
// "greeting=Hello, Ada!, words=2", each value on one line and cut to `max_value` columns.
std::string outputsText(const core::StepOutputs& outputs, std::size_t max_value = 40);

class ProgressDisplay : public core::RunObserver {
 public:
  static constexpr std::size_t kMaxStepLines = 30;
  // A longer step id is cut in the live lines ("…"), so that the phases stay in view.
  static constexpr std::size_t kMaxIdWidth = 24;

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
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace plugboard::cli

#endif  // PLUGBOARD_TOOLS_PROGRESS_H_

// core/workflows/run_report.h: what a workflow run reports: each step's phase, message, outputs and
// counts, and the run's outcome (core/workflows/step_report.h makes it from the engine's nodes;
// `plugboard run` prints it).
//
// Value types; thread-compatible.
#ifndef PLUGBOARD_CORE_WORKFLOWS_RUN_REPORT_H_
#define PLUGBOARD_CORE_WORKFLOWS_RUN_REPORT_H_

#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/duration.h"
#include "core/launch/call_log.h"

namespace plugboard::core {

using Json = nlohmann::json;

enum class StepPhase { kPending, kRunning, kSucceeded, kFailed, kError, kSkipped, kCancelled };
std::string_view stepPhaseName(StepPhase phase);
bool isTerminal(StepPhase phase);

// A step's outputs: {"parameters": {name: value}} once it succeeded (each value text, or
// a looped step's list of its items' texts), {} before. Kept as pairs in name order rather
// than as a JSON object: a run holds one per step until its end, and a JSON object of
// objects costs several times the text it holds.
struct StepOutputs {
  std::optional<std::vector<std::pair<std::string, Json>>> parameters;  // none: {}
  // Sets parameters from `pairs` in any order; of a name given twice, the last wins.
  void set(std::vector<std::pair<std::string, Json>> pairs);
  Json toJson() const;
};

struct StepStatus {
  std::string id;
  StepPhase phase = StepPhase::kPending;
  std::string message;
  StepOutputs outputs;
  int attempts = 0;    // attempts started
  int calls = 0;       // plugin calls made, requeues included
  std::string plugin;  // name@version that answered the last call
  std::string deployer;  // the deployer that ran it ("native", "process" ...)
  // What the plugin logged during the step's calls, whatever the runtime's log level: the
  // last LogLines::kMaxLines lines, older ones counted as dropped.
  LogLines logs;
  std::optional<std::chrono::steady_clock::time_point> started, finished;

  Millis elapsed(
      std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now()) const;
  Json toJson() const;
};

struct RunReport {
  std::string workflow;
  std::vector<StepStatus> steps;  // in file order
  // The workflow's phase as the engine decided it ("Succeeded", "Failed", "Error"; a step
  // whose `when` was false is Skipped in a run that Succeeded). Empty: every step must
  // have succeeded.
  std::string phase;
  Json outputs = Json::object();  // the workflow's outputs ([outputs]): name -> value
  bool cancelled = false;
  int abandoned = 0;
  Millis duration{0};

  bool succeeded() const;
  Json toJson() const;
  // Writes toJson().dump(2) to `out`, a step at a time: the report's JSON is never held
  // in memory whole. Text that is not UTF-8 is written with U+FFFD in its place.
  void writeJson(std::FILE* out) const;
  // The same text with `count` steps made one at a time by `step(i)` (`steps` is not
  // read), so that a caller need not hold every step's status at once; "succeeded" is
  // succeeded()'s answer over the steps made.
  void writeJson(std::FILE* out, std::size_t count,
                 const std::function<const StepStatus&(std::size_t)>& step) const;
};

// What a run tells while it goes on: each step's status as it changes.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // After every change of a step's phase or message.
  virtual void stepChanged(const StepStatus& step) = 0;
  // At least every 250 ms while the run goes on, for displays of elapsed time.
  virtual void tick() {}
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_RUN_REPORT_H_

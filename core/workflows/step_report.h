// core/workflows/step_report.h: a TOML workflow's run on the engine, told as steps.
//
// A TOML workflow runs on the engine (core/workflows/engine.h) as the model its front end
// made (core/frontends/toml_workflow.h): a task per step, a plugin template per step named
// by its id. StepReporter watches the engine's nodes and keeps each step's StepStatus (the
// task's node for phase, message, outputs and times; its leaves for attempts, calls and
// the plugin that answered), telling a RunObserver (the progress display) of each change,
// and makes the RunReport `plugboard run` prints. The rules of the words: a task omitted
// because a dependency did not succeed is "skipped: dependency 'X' <phase>"; when the run
// is cancelled, a step in flight is Cancelled and one not started is skipped.
//
// Thread-safety: as EngineObserver (the engine's thread only).
#ifndef PLUGBOARD_CORE_WORKFLOWS_STEP_REPORT_H_
#define PLUGBOARD_CORE_WORKFLOWS_STEP_REPORT_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "core/workflows/engine.h"
#include "core/workflows/run_report.h"
#include "core/workflows/workflow.h"

namespace plugboard::core {

class StepReporter final : public EngineObserver {
 public:
  // `workflow` must outlive this object; `observer` may be null.
  StepReporter(const Workflow& workflow, RunObserver* observer);

  void nodeChanged(const NodeStatus& node) override;
  void tick() override;

  // The run's report, from the engine's result.
  RunReport report(const RunResult& result);

 private:
  struct Step {
    StepStatus status;
    std::string task_node;                          // the task's node id
    bool omitted = false;  // skipped because a dependency did not succeed (not by `when`)
    std::unordered_map<std::string, int> leaf_calls;  // leaf node id -> its calls
  };
  void update(Step& step, const NodeStatus& node);

  const Workflow& workflow_;
  RunObserver* observer_;
  std::vector<Step> steps_;                            // in file order
  std::unordered_map<std::string, std::size_t> index_;  // step id -> position
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_STEP_REPORT_H_

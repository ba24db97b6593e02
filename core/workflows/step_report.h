// core/workflows/step_report.h: a TOML workflow's run on the engine, told as steps.
//
// A TOML workflow runs on the engine (core/workflows/engine.h) as the model its front end
// made (core/frontends/toml_workflow.h): a task per step, named by its id, in file order
// (plugin templates are shared by steps; a step's nodes are told by their display names,
// "ID", "ID(0)", "ID(0:a)", as step ids hold no parenthesis). The report is told from the model alone (the parsed TOML file
// is not kept for the run). StepReporter watches the engine's nodes and keeps each step's StepStatus (the
// task's node for phase, message, outputs and times; its leaves for attempts, calls and
// the plugin that answered), telling a RunObserver (the progress display) of each change,
// and makes the RunReport `plugboard run` prints. Without an observer it follows only the
// leaves as they go and reads the tasks' nodes from the run's result at the end, so that
// a large run does not hold a status per step beside the engine's nodes. The rules of the words: a task omitted
// because a dependency did not succeed says "dependency 'X' <phase>" (shown after its phase:
// "Skipped: dependency 'X' Failed"); when the run is cancelled, a step in flight is
// Cancelled and one not started is Skipped ("the run was cancelled").
//
// Thread-safety: as EngineObserver (the engine's thread only).
#ifndef PLUGBOARD_CORE_WORKFLOWS_STEP_REPORT_H_
#define PLUGBOARD_CORE_WORKFLOWS_STEP_REPORT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/workflows/engine.h"
#include "core/workflows/model.h"
#include "core/workflows/run_report.h"

namespace plugboard::core {

// The steps of a TOML workflow's model, in file order: the tasks of its entry dag and of
// its exit dag, ordered by where they are in the file.
std::vector<const TemplateCall*> tomlSteps(const WorkflowModel& model);

class StepReporter final : public EngineObserver {
 public:
  // `model` (a TOML workflow's) must outlive this object; `observer` may be null.
  StepReporter(const WorkflowModel& model, RunObserver* observer);

  void nodeChanged(const NodeStatus& node) override;
  void tick() override;

  // The run's report, from the engine's result. Once: the steps' statuses move into it,
  // and what the report takes of the result's nodes may be taken from them.
  RunReport report(RunResult&& result);

 private:
  // What the reporter keeps of a step besides its status (kept apart, so that the
  // statuses move into the report whole at the end instead of being copied beside it).
  struct Step {
    const TemplateCall* task = nullptr;
    // Nodes are told apart by a hash of their id, not a copy of it (a run holds a Step per
    // step until its end); ids are already unique by a hash of their names.
    std::size_t task_node = 0;  // the task's node id, hashed (0: none seen)
    NodeType task_type = NodeType::kPlugin;  // and its type
    bool omitted = false;   // skipped because a dependency did not succeed (not by `when`)
    // The step's leaves (one per attempt or item): node id, calls made, and how many of
    // its log lines the step has. The id is hashed, as task_node is. The first in place
    // (most steps have one), the others in `more`.
    struct Leaf {
      std::size_t id = 0;
      int calls = 0;
      std::size_t logs_seen = 0;
    };
    Leaf first;
    std::vector<Leaf> more;
    // Without an observer: what the step's leaves told of it while the run went on (the
    // rest of its status is read from the result's nodes at the end); the plugin and the
    // deployer as positions in names_ (0: none), as most steps name the same ones.
    LogLines logs;
    std::uint32_t plugin = 0, deployer = 0;
  };
  void update(std::size_t step, const NodeStatus& node);
  static void leafChanged(Step& step, LogLines& logs, const NodeStatus& node);
  static void countLeaves(const Step& step, StepStatus& s);
  static void taskChanged(Step& step, StepStatus& s, const NodeStatus& node);
  void omittedBecause(const Step& step, StepStatus& s) const;
  void fromResult(RunResult& result);
  std::uint32_t nameAt(const std::string& name);  // its position in names_, added if new

  RunObserver* observer_;
  std::vector<Step> steps_;          // in file order
  std::vector<StepStatus> statuses_;  // steps_[i]'s status (with an observer: as it goes)
  std::vector<std::string> names_{""};  // plugins and deployers that steps name
  std::unordered_map<std::string_view, std::size_t> index_;  // step id (the model's) -> position
  std::string entry_, exit_;  // the workflow's own dags' templates
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_STEP_REPORT_H_

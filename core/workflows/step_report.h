// core/workflows/step_report.h: a TOML workflow's run on the engine, told as steps.
//
// A TOML workflow runs on the engine (core/workflows/engine.h) as the model its front end
// made (core/frontends/toml_workflow.h): a task per step, named by its id, in file order
// (plugin templates are shared by steps; a step's nodes are told by their display names,
// "ID", "ID(0)", "ID(0:a)", as step ids hold no parenthesis). The report is told from the model alone (the parsed TOML file
// is not kept for the run). StepReporter watches the engine's nodes and keeps each step's StepStatus (the
// task's node for phase, message, outputs and times; its leaves for attempts, calls and
// the plugin that answered), telling a RunObserver (the progress display) of each change,
// and makes the RunReport `plugboard run` prints. Without an observer it follows nothing
// as the run goes and reads every step's nodes from the run's result at the end, so that
// a large run holds little per step beside the engine's nodes (its task and the
// task's node, hashed). The rules of the words: a task omitted
// because a dependency did not succeed says "dependency 'X' <phase>" (shown after its phase:
// "Skipped: dependency 'X' Failed"); when the run is cancelled, a step in flight is
// Cancelled and one not started is Skipped ("the run was cancelled").
//
// Thread-safety: as EngineObserver (the engine's thread only).
#ifndef PLUGBOARD_CORE_WORKFLOWS_STEP_REPORT_H_
#define PLUGBOARD_CORE_WORKFLOWS_STEP_REPORT_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
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
  // report(result).writeJson(out)'s text, without holding every step's status at once:
  // without an observer, each step's status is made from the result's nodes as it is
  // written, and its nodes go then. Returns the report without its steps (its outcome).
  RunReport writeJson(RunResult&& result, std::FILE* out);

 private:
  // What the reporter keeps of a step besides its status (kept apart, so that the
  // statuses move into the report whole at the end instead of being copied beside it).
  struct Step {
    const TemplateCall* task = nullptr;
    // Nodes are told apart by a hash of their id, not a copy of it (a run holds a Step per
    // step until its end); ids are already unique by a hash of their names.
    std::size_t task_node = 0;  // the task's node id, hashed (0: none seen)
    NodeType task_type = NodeType::kPlugin;  // and its type
    StepPhase phase = StepPhase::kPending;   // and its phase
    bool omitted = false;   // skipped because a dependency did not succeed (not by `when`)
  };
  // With an observer, a step's leaves (one per attempt or item) as they go: node id
  // (hashed, as task_node is), calls made, and how many of its log lines the step has. The
  // first in place (most steps have one), the others in `more`; the newest one's message.
  struct Leaves {
    struct Leaf {
      std::size_t id = 0;
      int calls = 0;
      std::size_t logs_seen = 0;
    };
    Leaf first;
    std::vector<Leaf> more;
    std::string last_message;
  };
  // The result's nodes of each step (a step's id, or its id and a parenthesis, names
  // them), in the order they were made: first[step] and next[node] are positions in
  // result.nodes, kNone ends a list.
  struct StepNodes {
    static constexpr std::uint32_t kNone = ~std::uint32_t{0};
    std::vector<std::uint32_t> first, next;
    bool read_again = false;  // a looped step's items are read by id later
  };
  using NodesById = std::unordered_map<std::size_t, const NodeStatus*>;
  // Lists each step's nodes and tells each Step of its task's node.
  StepNodes stepNodes(const RunResult& result);
  // Step i's status from its nodes (whose contents go unless read again).
  void statusFromNodes(std::size_t i, StepStatus& s, RunResult& result, const StepNodes& nodes);
  // The nodes by id when a step needs them (a looped one); empty otherwise.
  NodesById nodesById(const RunResult& result) const;
  // What the end adds to step i's status: a loop's gathered outputs, the words of a
  // cancelled run; the observer is told of a change.
  void finish(std::size_t i, StepStatus& s, const NodesById& by_id, bool cancelled,
              std::chrono::steady_clock::time_point now);
  RunReport head(const RunResult& result) const;  // the report without its steps
  void update(std::size_t step, const NodeStatus& node);
  static void leafChanged(Leaves& leaves, LogLines& logs, const NodeStatus& node);
  static void countLeaves(const Leaves& leaves, StepStatus& s);
  static void taskSeen(Step& step, const NodeStatus& node);
  static void taskChanged(Step& step, StepStatus& s, const NodeStatus& node);
  // A retried step that gave up says its last attempt's reason (`last_leaf_message`).
  static void lastAttemptsReason(const Step& step, StepStatus& s,
                                 const std::string& last_leaf_message);
  void omittedBecause(const Step& step, StepStatus& s) const;
  // The position in steps_ of the step named `id` (a step's id, or a node's display name
  // up to its first parenthesis); npos: none.
  std::size_t find(std::string_view id) const;

  RunObserver* observer_;
  std::vector<Step> steps_;          // in file order
  std::vector<StepStatus> statuses_;  // steps_[i]'s status (with an observer: as it goes)
  std::vector<Leaves> leaves_;        // steps_[i]'s leaves (with an observer only)
  std::vector<std::uint32_t> by_step_id_;  // positions in steps_, ordered by the steps' ids
  std::string entry_, exit_;  // the workflow's own dags' templates
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_STEP_REPORT_H_

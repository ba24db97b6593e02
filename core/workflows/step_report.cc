#include "core/workflows/step_report.h"

#include <algorithm>

#include "core/base/duration.h"

namespace plugboard::core {
namespace {

// What the engine writes on the nodes a cancel() ended (Argo's `argo terminate`).
constexpr std::string_view kCancelledMessage = "Stopped with strategy 'Terminate'";

StepPhase stepPhase(NodePhase phase) {
  switch (phase) {
    case NodePhase::kPending: return StepPhase::kPending;
    case NodePhase::kRunning: return StepPhase::kRunning;
    case NodePhase::kSucceeded: return StepPhase::kSucceeded;
    case NodePhase::kFailed: return StepPhase::kFailed;
    case NodePhase::kError: return StepPhase::kError;
    case NodePhase::kSkipped:
    case NodePhase::kOmitted: return StepPhase::kSkipped;
  }
  return StepPhase::kPending;
}

std::size_t idHash(std::string_view id) { return std::hash<std::string_view>{}(id) | 1; }

// A node's output parameters as TOML steps report them.
StepOutputs stepOutputs(const NodeIO& outputs) {
  std::vector<std::pair<std::string, Json>> pairs;
  pairs.reserve(outputs.parameters.size());
  for (const auto& [name, value] : outputs.parameters) pairs.emplace_back(name, value);
  StepOutputs out;
  out.set(std::move(pairs));
  return out;
}

}  // namespace

std::vector<const TemplateCall*> tomlSteps(const WorkflowModel& model) {
  std::vector<const TemplateCall*> steps;
  for (const std::string* dag : {&model.entrypoint, &model.on_exit}) {
    const Template* t = dag->empty() ? nullptr : model.find(*dag);
    if (t == nullptr) continue;
    for (const auto& task : t->tasks) steps.push_back(&task);
  }
  std::stable_sort(steps.begin(), steps.end(), [](const TemplateCall* a, const TemplateCall* b) {
    return std::pair(a->where.line, a->where.column) < std::pair(b->where.line, b->where.column);
  });
  return steps;
}

StepReporter::StepReporter(const WorkflowModel& model, RunObserver* observer)
    : observer_(observer), entry_(model.entrypoint), exit_(model.on_exit) {
  const auto tasks = tomlSteps(model);
  steps_.resize(tasks.size());
  // With an observer, each step's status is kept as it changes (the observer is told of
  // it); without one, only what the end's nodes cannot tell is (Step's logs, plugin...).
  if (observer_ != nullptr) statuses_.resize(tasks.size());
  index_.reserve(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (observer_ != nullptr) statuses_[i].id = tasks[i]->name;
    steps_[i].task = tasks[i];
    index_.emplace(tasks[i]->name, i);
  }
}

void StepReporter::nodeChanged(const NodeStatus& node) {
  if (node.template_name == entry_ || (!exit_.empty() && node.template_name == exit_))
    return;  // the workflow's own dags
  const std::string_view name = node.display_name;
  auto it = index_.find(name.substr(0, name.find('(')));
  if (it == index_.end()) return;
  update(it->second, node);
}

void StepReporter::update(std::size_t i, const NodeStatus& node) {
  Step& step = steps_[i];
  if (observer_ == nullptr) {
    // No observer: the step's leaves are followed (their calls, logs and plugin as they
    // come), its task's node is read from the result at the end.
    if (node.type != NodeType::kPlugin) return;
    leafChanged(step, step.logs, node);
    if (!node.plugin.empty()) step.plugin = nameAt(node.plugin);
    if (!node.deployer.empty()) step.deployer = nameAt(node.deployer);
    return;
  }
  StepStatus& s = statuses_[i];
  const StepPhase before = s.phase;
  const std::string message_before = s.message;
  if (node.type == NodeType::kPlugin) {
    leafChanged(step, s.logs, node);
    countLeaves(step, s);
    if (!node.plugin.empty()) s.plugin = node.plugin;
    if (!node.deployer.empty()) s.deployer = node.deployer;
  }
  // The task's node: the one named as the step (a retry's attempts and a loop's items
  // are named "id(0)", "id(0:a)").
  if (node.display_name == s.id) {
    taskChanged(step, s, node);
    if (step.omitted) omittedBecause(step, s);
  }
  if (observer_ != nullptr && (s.phase != before || s.message != message_before))
    observer_->stepChanged(s);
}

void StepReporter::leafChanged(Step& step, LogLines& logs, const NodeStatus& node) {
  const std::size_t id = idHash(node.id);
  Step::Leaf* leaf = nullptr;
  if (step.first.id == 0 || step.first.id == id) {
    leaf = &step.first;
  } else {
    auto it = std::find_if(step.more.begin(), step.more.end(),
                           [&](const auto& l) { return l.id == id; });
    leaf = it != step.more.end() ? &*it : &step.more.emplace_back();
  }
  leaf->id = id;
  leaf->calls = node.calls;
  logs.appendSince(node.logs, leaf->logs_seen);
  leaf->logs_seen = node.logs.total();
}

void StepReporter::countLeaves(const Step& step, StepStatus& s) {
  if (step.first.id == 0) return;  // no leaf yet
  s.attempts = 1 + static_cast<int>(step.more.size());
  s.calls = step.first.calls;
  for (const auto& l : step.more) s.calls += l.calls;
}

void StepReporter::taskChanged(Step& step, StepStatus& s, const NodeStatus& node) {
  step.task_node = idHash(node.id);
  step.task_type = node.type;
  s.phase = stepPhase(node.phase);
  s.message = node.message;
  s.started = node.started;
  s.finished = node.finished;
  if (s.phase == StepPhase::kSucceeded) s.outputs = stepOutputs(node.outputs);
  step.omitted = node.phase == NodePhase::kOmitted;
}

void StepReporter::omittedBecause(const Step& step, StepStatus& s) const {
  // The first dependency that did not end as Argo's `depends` needs (Succeeded, or
  // Skipped by its `when`).
  for (const auto& d : step.task->depends_on) {
    const std::size_t j = index_.at(d);
    const StepStatus& dep = statuses_[j];
    if (dep.phase == StepPhase::kSucceeded ||
        (dep.phase == StepPhase::kSkipped && !steps_[j].omitted))
      continue;
    s.message = "dependency '" + d + "' " + std::string(stepPhaseName(dep.phase));
    break;
  }
}

std::uint32_t StepReporter::nameAt(const std::string& name) {
  for (std::uint32_t i = 1; i < names_.size(); ++i) {
    if (names_[i] == name) return i;
  }
  names_.push_back(name);
  return static_cast<std::uint32_t>(names_.size() - 1);
}

void StepReporter::tick() {
  if (observer_ != nullptr) observer_->tick();
}

void StepReporter::fromResult(RunResult& result) {
  statuses_.resize(steps_.size());
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    Step& step = steps_[i];
    StepStatus& s = statuses_[i];
    s.id = step.task->name;
    countLeaves(step, s);
    s.logs = std::move(step.logs);
    s.plugin = names_[step.plugin];
    s.deployer = names_[step.deployer];
  }
  // Each task's node as it ended (the engine tells every change of a node, so its last
  // state is the one an observer was told last), then the omitted tasks' reasons, once
  // every dependency's phase is known. Unless a looped or retried step's children are
  // read below, no node is read again: what each holds goes once read, so that the
  // statuses made here take its place instead of adding to the run's peak.
  const auto ownDag = [&](const NodeStatus& node) {
    return node.template_name == entry_ || (!exit_.empty() && node.template_name == exit_);
  };
  const bool nodes_read_again =
      std::any_of(result.nodes.begin(), result.nodes.end(), [&](const NodeStatus& node) {
        return (node.type == NodeType::kTaskGroup || node.type == NodeType::kRetry) &&
               !ownDag(node) && index_.count(node.display_name) != 0;
      });
  for (auto& node : result.nodes) {
    if (!ownDag(node)) {
      auto it = index_.find(node.display_name);
      if (it != index_.end()) taskChanged(steps_[it->second], statuses_[it->second], node);
    }
    if (!nodes_read_again) node = NodeStatus{};
  }
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    if (steps_[i].omitted) omittedBecause(steps_[i], statuses_[i]);
  }
}

RunReport StepReporter::report(RunResult&& result) {
  if (observer_ == nullptr) fromResult(result);
  RunReport report;
  report.workflow = result.workflow;
  report.cancelled = result.cancelled;
  report.abandoned = result.abandoned;
  report.duration = result.duration;
  report.phase = std::string(nodePhaseName(result.phase));
  if (result.outputs.contains("parameters")) {
    for (const auto& p : result.outputs["parameters"])
      report.outputs[p["name"].get<std::string>()] = p["value"];
  }
  // A looped step's outputs: each parameter gathered over its items, in item order; a
  // retried step's message from its last attempt. The nodes by id only when a step needs
  // them (a map of every node would be the largest thing a run of plain steps holds).
  std::unordered_map<std::size_t, const NodeStatus*> by_id;
  if (std::any_of(steps_.begin(), steps_.end(), [](const Step& s) {
        return s.task_type == NodeType::kTaskGroup || s.task_type == NodeType::kRetry;
      })) {
    by_id.reserve(result.nodes.size());
    for (const auto& n : result.nodes) by_id.emplace(idHash(n.id), &n);
  }
  const auto now = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    Step& step = steps_[i];
    StepStatus& s = statuses_[i];
    auto task = by_id.find(step.task_node);
    if (task != by_id.end() && task->second->type == NodeType::kTaskGroup &&
        s.phase == StepPhase::kSucceeded) {
      std::vector<std::pair<std::string, Json>> gathered;  // name -> its items' values
      std::unordered_map<std::string_view, std::size_t> at;
      for (const auto& child : task->second->children) {
        auto c = by_id.find(idHash(child));
        if (c == by_id.end()) continue;
        for (const auto& [name, value] : c->second->outputs.parameters) {
          auto [it, added] = at.emplace(name, gathered.size());
          if (added) gathered.emplace_back(name, Json::array());
          gathered[it->second].second.push_back(value);
        }
      }
      s.outputs.set(std::move(gathered));
    }
    const StepPhase phase_before = s.phase;
    const std::string message_before = s.message;
    // A retried step that gave up: its last attempt's reason says more than Argo's "No
    // more retries left" on the retry node. Its children are its attempts, named
    // "<retry node>(N)", and, as in Argo's dags, the tasks that depend on it.
    if (task != by_id.end() && task->second->type == NodeType::kRetry &&
        (s.phase == StepPhase::kFailed || s.phase == StepPhase::kError)) {
      const std::string attempt_prefix = task->second->name + "(";
      const auto& children = task->second->children;
      for (auto child = children.rbegin(); child != children.rend(); ++child) {
        auto c = by_id.find(idHash(*child));
        if (c == by_id.end() || !c->second->name.starts_with(attempt_prefix)) continue;
        if (!c->second->message.empty()) s.message = c->second->message;
        break;
      }
    }
    if (result.cancelled && !isTerminal(s.phase)) {
      s.phase = StepPhase::kSkipped;
      s.message = "the run was cancelled";
    } else if (result.cancelled && s.phase == StepPhase::kFailed &&
               s.message == kCancelledMessage) {
      s.phase = StepPhase::kCancelled;
      s.message = "cancelled while running (after " + formatElapsed(s.elapsed(now)) + ")";
    }
    if (observer_ != nullptr && (s.phase != phase_before || s.message != message_before))
      observer_->stepChanged(s);
  }
  report.steps = std::move(statuses_);
  statuses_.clear();
  return report;
}

}  // namespace plugboard::core

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
  // it); without one, nothing is kept until the end's nodes are read.
  if (observer_ != nullptr) {
    statuses_.resize(tasks.size());
    leaves_.resize(tasks.size());
  }
  by_step_id_.resize(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (observer_ != nullptr) statuses_[i].id = tasks[i]->name;
    steps_[i].task = tasks[i];
    by_step_id_[i] = static_cast<std::uint32_t>(i);
  }
  std::sort(by_step_id_.begin(), by_step_id_.end(), [&](std::uint32_t a, std::uint32_t b) {
    return tasks[a]->name < tasks[b]->name;
  });
}

std::size_t StepReporter::find(std::string_view id) const {
  auto it = std::lower_bound(by_step_id_.begin(), by_step_id_.end(), id, [&](std::uint32_t i, std::string_view v) {
    return std::string_view(steps_[i].task->name) < v;
  });
  if (it == by_step_id_.end() || steps_[*it].task->name != id) return std::string_view::npos;
  return *it;
}

void StepReporter::nodeChanged(const NodeStatus& node) {
  if (observer_ == nullptr) return;  // read from the result at the end
  if (node.template_name == entry_ || (!exit_.empty() && node.template_name == exit_))
    return;  // the workflow's own dags
  const std::string_view name = node.display_name;
  const std::size_t i = find(name.substr(0, name.find('(')));
  if (i != std::string_view::npos) update(i, node);
}

void StepReporter::update(std::size_t i, const NodeStatus& node) {
  Step& step = steps_[i];
  StepStatus& s = statuses_[i];
  const StepPhase before = s.phase;
  const std::string message_before = s.message;
  if (node.type == NodeType::kPlugin) {
    leafChanged(leaves_[i], s.logs, node);
    countLeaves(leaves_[i], s);
    if (!node.plugin.empty()) s.plugin = node.plugin;
    if (!node.deployer.empty()) s.deployer = node.deployer;
  }
  // The task's node: the one named as the step (a retry's attempts and a loop's items
  // are named "id(0)", "id(0:a)").
  if (node.display_name == s.id) {
    taskChanged(step, s, node);
    if (step.omitted) omittedBecause(step, s);
  }
  lastAttemptsReason(step, s, leaves_[i].last_message);
  if (s.phase != before || s.message != message_before) observer_->stepChanged(s);
}

void StepReporter::leafChanged(Leaves& leaves, LogLines& logs, const NodeStatus& node) {
  const std::size_t id = idHash(node.id);
  Leaves::Leaf* leaf = nullptr;
  if (leaves.first.id == 0 || leaves.first.id == id) {
    leaf = &leaves.first;
  } else {
    auto it = std::find_if(leaves.more.begin(), leaves.more.end(),
                           [&](const auto& l) { return l.id == id; });
    leaf = it != leaves.more.end() ? &*it : &leaves.more.emplace_back();
  }
  leaf->id = id;
  leaf->calls = node.calls;
  if (leaf == (leaves.more.empty() ? &leaves.first : &leaves.more.back()))
    leaves.last_message = node.message;
  logs.appendSince(node.logs, leaf->logs_seen);
  leaf->logs_seen = node.logs.total();
}

void StepReporter::countLeaves(const Leaves& leaves, StepStatus& s) {
  if (leaves.first.id == 0) return;  // no leaf yet
  s.attempts = 1 + static_cast<int>(leaves.more.size());
  s.calls = leaves.first.calls;
  for (const auto& l : leaves.more) s.calls += l.calls;
}

void StepReporter::taskSeen(Step& step, const NodeStatus& node) {
  step.task_node = idHash(node.id);
  step.task_type = node.type;
  step.phase = stepPhase(node.phase);
  step.omitted = node.phase == NodePhase::kOmitted;
}

void StepReporter::taskChanged(Step& step, StepStatus& s, const NodeStatus& node) {
  taskSeen(step, node);
  s.phase = step.phase;
  s.message = node.message;
  s.started = node.started;
  s.finished = node.finished;
  if (s.phase == StepPhase::kSucceeded) s.outputs = stepOutputs(node.outputs);
}

void StepReporter::lastAttemptsReason(const Step& step, StepStatus& s,
                                      const std::string& last_leaf_message) {
  // Its last attempt's reason says more than Argo's "No more retries left" on the retry
  // node; its attempts are its leaves, the last made last.
  if (step.task_type == NodeType::kRetry &&
      (s.phase == StepPhase::kFailed || s.phase == StepPhase::kError) &&
      !last_leaf_message.empty()) {
    s.message = last_leaf_message;
  }
}

void StepReporter::omittedBecause(const Step& step, StepStatus& s) const {
  // The first dependency that did not end as Argo's `depends` needs (Succeeded, or
  // Skipped by its `when`).
  for (const auto& d : step.task->depends_on) {
    const std::size_t j = find(d);
    if (j == std::string_view::npos) continue;  // not a step: the front end names only steps
    const Step& dep = steps_[j];
    if (dep.phase == StepPhase::kSucceeded || (dep.phase == StepPhase::kSkipped && !dep.omitted))
      continue;
    s.message = "dependency '" + d + "' " + std::string(stepPhaseName(dep.phase));
    break;
  }
}

void StepReporter::tick() {
  if (observer_ != nullptr) observer_->tick();
}

StepReporter::StepNodes StepReporter::stepNodes(const RunResult& result) {
  StepNodes lists;
  lists.first.assign(steps_.size(), StepNodes::kNone);
  lists.next.assign(result.nodes.size(), StepNodes::kNone);
  std::vector<std::uint32_t> last(steps_.size(), StepNodes::kNone);
  for (std::uint32_t n = 0; n < result.nodes.size(); ++n) {
    const NodeStatus& node = result.nodes[n];
    if (node.template_name == entry_ || (!exit_.empty() && node.template_name == exit_))
      continue;  // the workflow's own dags
    const std::string_view name = node.display_name;
    const std::size_t i = find(name.substr(0, name.find('(')));
    if (i == std::string_view::npos) continue;
    (last[i] == StepNodes::kNone ? lists.first[i] : lists.next[last[i]]) = n;
    last[i] = n;
    if (name != steps_[i].task->name) continue;
    taskSeen(steps_[i], node);  // the task's node: its last state is the end's
    if (node.type == NodeType::kTaskGroup) lists.read_again = true;
  }
  return lists;
}

void StepReporter::statusFromNodes(std::size_t i, StepStatus& s, RunResult& result,
                                   const StepNodes& nodes) {
  // The step's leaves (one per attempt or item: attempts, calls, logs and the plugin that
  // answered last) and its task's node (the one named as the step), in the order they
  // were made; then, if a dependency did not succeed, which one. Unless a looped or
  // retried step's children are read later, what each node holds goes once read, so
  // that the status takes its place instead of adding to the run's peak.
  Step& step = steps_[i];
  s.id = step.task->name;
  std::string last_leaf_message;
  int made = 0;
  for (auto n = nodes.first[i]; n != StepNodes::kNone; n = nodes.next[n]) {
    NodeStatus& node = result.nodes[n];
    if (node.type == NodeType::kPlugin) {
      last_leaf_message = node.message;
      ++s.attempts;
      s.calls += node.calls;
      if (s.logs.empty() && !nodes.read_again) {
        s.logs = std::move(node.logs);
      } else {
        s.logs.append(node.logs);
      }
      if (!node.plugin.empty()) s.plugin = node.plugin;
      if (!node.deployer.empty()) s.deployer = node.deployer;
    }
    if (node.display_name == s.id) {
      taskChanged(step, s, node);
      if (node.type == NodeType::kRetry) {
        made = node.attempts;
        s.calls += node.calls;  // those of the attempts no longer kept
      }
    }
    if (!nodes.read_again) node = NodeStatus{};
  }
  // A retry's attempts past the ones kept (EngineOptions::kept_attempts) count too.
  s.attempts = std::max(s.attempts, made);
  lastAttemptsReason(step, s, last_leaf_message);
  if (step.omitted) omittedBecause(step, s);
}

StepReporter::NodesById StepReporter::nodesById(const RunResult& result) const {
  // A map of every node would be the largest thing a run of plain steps holds: only when
  // a step needs it.
  NodesById by_id;
  if (std::any_of(steps_.begin(), steps_.end(),
                  [](const Step& s) { return s.task_type == NodeType::kTaskGroup; })) {
    by_id.reserve(result.nodes.size());
    for (const auto& n : result.nodes) by_id.emplace(idHash(n.id), &n);
  }
  return by_id;
}

RunReport StepReporter::head(const RunResult& result) const {
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
  return report;
}

RunReport StepReporter::report(RunResult&& result) {
  RunReport report = head(result);
  if (observer_ == nullptr) {
    const StepNodes nodes = stepNodes(result);
    statuses_.resize(steps_.size());
    for (std::size_t i = 0; i < steps_.size(); ++i) statusFromNodes(i, statuses_[i], result, nodes);
  }
  const NodesById by_id = nodesById(result);
  const auto now = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < steps_.size(); ++i) finish(i, statuses_[i], by_id, result.cancelled, now);
  report.steps = std::move(statuses_);
  statuses_.clear();
  return report;
}

RunReport StepReporter::writeJson(RunResult&& result, std::FILE* out) {
  if (observer_ != nullptr) {  // the statuses are already held
    RunReport report = this->report(std::move(result));
    report.writeJson(out);
    report.steps.clear();
    return report;
  }
  RunReport report = head(result);
  const StepNodes nodes = stepNodes(result);
  const NodesById by_id = nodesById(result);
  const auto now = std::chrono::steady_clock::now();
  StepStatus current;
  report.writeJson(out, steps_.size(), [&](std::size_t i) -> const StepStatus& {
    current = StepStatus{};
    statusFromNodes(i, current, result, nodes);
    finish(i, current, by_id, result.cancelled, now);
    return current;
  });
  return report;
}

void StepReporter::finish(std::size_t i, StepStatus& s, const NodesById& by_id, bool cancelled,
                          std::chrono::steady_clock::time_point now) {
  const Step& step = steps_[i];
  auto task = by_id.find(step.task_node);
  // A looped step's outputs: each parameter gathered over its items, in item order.
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
  if (cancelled && !isTerminal(s.phase)) {
    s.phase = StepPhase::kSkipped;
    s.message = "the run was cancelled";
  } else if (cancelled && s.phase == StepPhase::kFailed && s.message == kCancelledMessage) {
    s.phase = StepPhase::kCancelled;
    s.message = "cancelled while running (after " + formatElapsed(s.elapsed(now)) + ")";
  }
  if (observer_ != nullptr && (s.phase != phase_before || s.message != message_before))
    observer_->stepChanged(s);
}

}  // namespace plugboard::core

// core/workflows/engine_state.h: the engine's state between events (core/workflows/engine.h),
// shared by its files: engine.cc (the scheduling loop), engine_nodes.cc (nodes, leaves,
// retries, exit handlers), engine_composite.cc (steps, dag, loops, parallelism),
// engine_scope.cc (variables, inputs, outputs).
//
// Nodes live in two arrays of the same index: NodeStatus (what is reported) and Node (what
// the scheduler needs). A node tells its parent when it is fulfilled (ended, and its exit
// handler ended) through a queue drained in a loop, never by recursion, so a chain of any
// length costs no stack. Each event touches the node, its parent and the dependents of
// a dag task: nothing visits all nodes, except cancel(), the end of the run and a dag's
// stop (stopDag: the nodes made after it).
//
// Thread-safety: none; the scheduling thread only.
#ifndef PLUGBOARD_CORE_WORKFLOWS_ENGINE_STATE_H_
#define PLUGBOARD_CORE_WORKFLOWS_ENGINE_STATE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/workflows/engine.h"
#include "core/workflows/expression.h"
#include "core/workflows/template_text.h"

namespace plugboard::core {

using TimePoint = RunEnv::TimePoint;
inline constexpr std::uint32_t kNoNode = std::numeric_limits<std::uint32_t>::max();
// The slot of an exit handler's node in the node it handles.
inline constexpr std::uint32_t kExitSlot = kNoNode;

// A list per task, all in one array: task i's are items[start[i]] to items[start[i + 1]]
// (a dag of 10,000 tasks holds two arrays, not 10,000 vectors of one element).
template <typename T>
struct TaskLists {
  std::vector<std::uint32_t> start{0};
  std::vector<T> items;
  std::span<const T> operator[](std::size_t i) const {
    return {items.data() + start[i], items.data() + start[i + 1]};
  }
  void endList() { start.push_back(static_cast<std::uint32_t>(items.size())); }
};

// What the engine knows of a template before it runs, computed once per template.
struct TemplateInfo {
  // steps: each call's flat index; dag: each task's index. Name -> index.
  std::unordered_map<std::string, std::uint32_t> index;
  // dag: the names with '-', written with '_' as `depends` sees them (the others: `index`)
  std::unordered_map<std::string, std::uint32_t> depends_index;
  std::vector<const TemplateCall*> calls;  // by index
  // dag only
  TaskLists<std::uint32_t> deps, dependents;
  // The expression, '-' written '_': the task's own text (the model outlives the info)
  // or, for one with '-', its copy in `underscored` (a deque: its strings never move).
  std::vector<std::string_view> depends;
  std::deque<std::string> underscored;
  // A `depends` that is only terms joined by && (what `dependencies` becomes): its terms,
  // evaluated one by one without the expression evaluator (no recursion per term, so a
  // join of 100,000 tasks is fine). None for any other expression.
  TaskLists<std::string_view> conjunction;
  std::vector<char> needed;          // runs for the target (all when none)
  std::vector<char> is_target;
  std::vector<std::uint32_t> targets, order;  // target tasks; all tasks, dependencies first
  std::uint32_t needed_count = 0;
  std::string problem;  // an unknown dependency or a cycle (checkModel reports them first)

  TemplateInfo() = default;
  TemplateInfo(TemplateInfo&&) = default;  // `depends` still views the moved strings
  TemplateInfo(const TemplateInfo&) = delete;  // a copy's views would be the original's
  TemplateInfo& operator=(const TemplateInfo&) = delete;
};
// Builds the info of a dag or steps template; `target`: its dag.target with any tags
// filled (nullptr: as written).
TemplateInfo makeTemplateInfo(const Template& t, const std::string* target = nullptr);
// The terms of `expression` if it is TERM && TERM ..., each TERM a name or name.Result
// (views of `expression`); none for any other expression.
std::vector<std::string_view> conjunctionTerms(std::string_view expression);

enum class NodeKind : std::uint8_t { kLeaf, kRetry, kSteps, kGroup, kDag, kTaskGroup, kDone };

// A call's outputs as a parent sees them: the node of a call, or of each loop item.
struct Slot {
  std::uint32_t node = kNoNode;
  std::vector<std::uint32_t> items;  // loop children, in item order
  bool loop = false;
};

struct Composite {
  std::vector<Slot> slots;
  std::vector<std::uint32_t> kids;     // steps groups: their call nodes (for the next group)
  std::vector<std::uint32_t> waiting;  // dag: dependencies not fulfilled, per task
  std::vector<NodePhase> branch;       // dag: each fulfilled task's branch phase
  std::uint32_t ended_tasks = 0;       // dag: needed tasks fulfilled
  std::uint32_t group = 0;             // steps: the group running
  std::uint32_t current = kNoNode;     // steps: the group node running
  bool failing = false;                // dag failFast / group: a child failed
  bool stopped = false;  // dag: its value language decided it (ValueLanguage::ends)
  std::optional<int> parallelism;  // children at once, when a value language gave it
  std::string fail_message;
  int running_children = 0;            // counted against the template's parallelism
  // Children waiting for a place, in order from gated_head.
  std::vector<std::function<std::uint32_t()>> gated;
  std::size_t gated_head = 0;
  // retry nodes: their attempts' nodes, at most EngineOptions::kept_attempts (startAttempt).
  std::vector<std::uint32_t> attempts;
};

// Fields ordered so that no padding falls between them (a run holds one per node).
struct Node {
  NodeKind kind = NodeKind::kDone;
  // Template calls from the entry (1) to this node (a retry's attempts, steps groups and
  // task groups count as their parent's; an exit handler as a call its node made).
  std::uint16_t depth = 0;
  const Template* tmpl = nullptr;
  const TemplateCall* call = nullptr;  // the call that made it; null for the entry, exits
  std::uint32_t parent = kNoNode;      // told when this node is fulfilled
  std::uint32_t slot = 0;              // which of the parent's calls (or kExitSlot)
  std::uint32_t frame = kNoNode;       // the node whose inputs its template text sees
  std::uint32_t caller = kNoNode;      // the composite whose scope the call was filled in
  std::uint32_t boundary = kNoNode;    // the steps/dag node it belongs to
  std::uint32_t gate = kNoNode;        // the composite whose parallelism it counts against
  std::uint32_t exit_node = kNoNode;   // its exit handler's node
  bool attempt = false;                // a retry's attempt (its exit handler is the retry's)
  bool fulfilled = false;
  bool in_flight = false;  // leaves
  bool queued = false;     // leaves
  Json item;                           // the loop item it was made for (null: none)
  Part<Json> args;  // a plugin call's args as the model's ValueLanguage filled them
  TimePoint deadline = TimePoint::max();  // activeDeadline, its own or inherited

  // composites (steps, groups, dag, task groups): their own block, as most nodes are leaves
  std::uint32_t open = 0;  // children started (or gated) and not fulfilled
  std::uint32_t timer_gen = 0;  // leaves: timers of another generation are stale
  std::unique_ptr<Composite> composite;
  Composite& c() {
    if (!composite) composite = std::make_unique<Composite>();
    return *composite;
  }
  const Composite& c() const {
    static const Composite kNone;
    return composite ? *composite : kNone;
  }

  // leaves
  std::shared_ptr<CallControl> control;
  std::uint64_t token = 0;
  TimePoint attempt_deadline = TimePoint::max();
  int retry_index = 0;  // {{retries}}

  // retry nodes
  int limit = -1;  // -1: no limit
  TimePoint first_started{};
};

// The scheduling state of one run (Engine::Impl owns one per run()).
class EngineRun {
 public:
  EngineRun(const WorkflowModel& model, const Json& parameters, LeafCalls& calls,
            const EngineOptions& options, EngineObserver* observer, RunEnv& env);

  // A call handed to a worker: its result comes back through leafReturned().
  struct Launch {
    std::uint32_t node;
    std::uint64_t token;
    std::shared_ptr<CallControl> control;
    LeafCall call;
  };

  void start(TimePoint now);
  void leafReturned(std::uint32_t n, std::uint64_t token, Dispatch dispatch, TimePoint now);
  int timersDue(TimePoint now);  // returns the calls given up on
  std::optional<Launch> nextLaunch(TimePoint now);
  void cancel(TimePoint now, const std::string& message, bool by_user = true);
  void resume(TimePoint now);  // ends every running suspend node Succeeded
  std::optional<TimePoint> nextTimer() const;
  bool finished() const { return finished_; }
  bool cancelling() const { return cancelling_; }
  int inFlight() const { return in_flight_; }
  int unanswered() const { return unanswered_; }
  RunResult result(Millis duration);

  // Scope (engine_scope.cc).
  std::optional<Json> lookup(std::uint32_t frame, const Json* item, std::uint32_t self,
                             std::string_view dotted) const;
  const WorkflowModel& model() const { return model_; }

 private:
  friend class NodeScope;
  struct Timer {
    TimePoint when;
    std::uint32_t node;
    std::uint32_t gen;
    enum class What : std::uint8_t { kDeadline, kCallAgain, kRetry, kSuspend, kWorkflow } what;
    bool operator>(const Timer& o) const { return when > o.when; }
  };

  // engine_nodes.cc
  // A node at the end of the arrays, or made anew at `reuse` (an ended retry attempt,
  // whose timers and queue places go with it).
  std::uint32_t newNode(std::string name, NodeType type, const Template* tmpl,
                        std::uint32_t boundary, std::uint32_t parent, std::uint32_t slot,
                        std::uint32_t reuse = kNoNode);
  std::uint32_t startCall(std::string name, const Template* tmpl, const TemplateCall* call,
                          std::uint32_t parent, std::uint32_t slot, std::uint32_t boundary,
                          std::uint32_t caller, Json item, const Json& args, TimePoint now);
  void startBody(std::uint32_t n, TimePoint now);
  void startAttempt(std::uint32_t retry, TimePoint now);
  void queueLeaf(std::uint32_t n, TimePoint now);
  Expected<LeafCall> leafCall(std::uint32_t n);
  void leafSucceeded(std::uint32_t n, Outcome& outcome, TimePoint now);
  void retryDecide(std::uint32_t r, std::uint32_t attempt, TimePoint now);
  void end(std::uint32_t n, NodePhase phase, std::string message, TimePoint now);
  void drain(TimePoint now);
  // Ends the run in Error with `message` at the next point where nothing is half made
  // (the end of drain()): every node still running stops, as on cancel.
  void fail(std::string message);
  void childFulfilled(std::uint32_t p, std::uint32_t child, TimePoint now);
  void rootFulfilled(std::uint32_t n, TimePoint now);
  void addTimer(TimePoint when, std::uint32_t n, Timer::What what);
  void addChild(std::uint32_t parent, std::uint32_t child);
  void notify(std::uint32_t n);
  const TemplateInfo& info(const Template* t);

  // engine_composite.cc
  void startSteps(std::uint32_t s, TimePoint now);
  void startGroup(std::uint32_t s, std::uint32_t g, TimePoint now);
  void groupChildFulfilled(std::uint32_t g, std::uint32_t child, TimePoint now);
  void stepsGroupFulfilled(std::uint32_t s, std::uint32_t g, TimePoint now);
  void startDag(std::uint32_t d, TimePoint now);
  void startTask(std::uint32_t d, std::uint32_t task, TimePoint now);
  void dagTaskFulfilled(std::uint32_t d, std::uint32_t task, TimePoint now);
  void finishDag(std::uint32_t d, TimePoint now);
  // The value language decided dag `d` (ValueLanguage::ends): it stops.
  void stopDag(std::uint32_t d, Json value, TimePoint now);
  bool stoppedAbove(std::uint32_t n) const;  // a dag above `n` was stopped
  std::optional<int> parallelismOf(std::uint32_t n) const;
  void taskGroupChildFulfilled(std::uint32_t tg, TimePoint now);
  // Starts `call` from composite `c` (one node per loop item): `after` gets each node.
  // `link` gets the call's top node (its own, a TaskGroup, a skipped node) once it exists.
  void expandCall(std::uint32_t c, const TemplateCall& call, const std::string& base,
                  std::uint32_t parent, std::uint32_t slot,
                  const std::function<void(std::uint32_t)>& link, TimePoint now);
  // Starts a child of `boundary` that runs `child`, or queues it while the boundary's
  // parallelism is taken.
  void gatedStart(std::uint32_t boundary, const Template& child,
                  std::function<std::uint32_t()> start);
  void releaseGate(std::uint32_t n);
  Expected<std::vector<Json>> loopItems(std::uint32_t c, const Loop& loop);
  std::uint32_t skippedNode(std::string name, const TemplateCall* call, std::uint32_t boundary,
                            std::uint32_t parent, std::uint32_t slot, NodePhase phase,
                            std::string message, TimePoint now);
  Expected<bool> dependsHold(std::uint32_t d, std::uint32_t task) const;
  void finish(TimePoint now);

  // engine_scope.cc
  Expected<Json> fillIn(std::uint32_t frame, const Json* item, std::uint32_t self,
                        const Json& value, bool keep_unknown = false) const;
  // `filled` gets the text after its tags were filled (for the Skipped node's message).
  Expected<bool> whenHolds(std::uint32_t frame, const Json* item, const std::string& when,
                           std::string* filled = nullptr) const;
  Status bindInputs(std::uint32_t n, const Json& args);
  Status setOutputs(std::uint32_t n, const Outcome* outcome);
  Json stepRef(std::uint32_t slot_node, const Slot& slot, std::string_view rest,
               bool& found) const;
  void publishGlobal(const std::string& name, const Json& value);

 public:
  const WorkflowModel& model_;
  LeafCalls& calls_;
  EngineOptions options_;
  EngineObserver* observer_;
  RunEnv& env_;
  Json globals_ = Json::object();  // "workflow.x" -> value
  Json global_outputs_ = Json::object();
  std::string workflow_name_, uid_;
  std::vector<NodeStatus> status_;
  std::vector<Node> nodes_;
  std::unordered_map<const Template*, std::unique_ptr<TemplateInfo>> infos_;
  std::unordered_map<const Template*, std::unique_ptr<TemplateText>> texts_;  // leaves'
  std::unordered_map<std::string, const Template*> by_name_;
  Part<Json> pending_args_;  // the next startCall()'s node's args (Node::args)
  std::optional<int> pending_parallelism_;  // the next startDag()'s (Composite::parallelism)
  bool any_stopped_ = false;  // some dag was stopped: starts check stoppedAbove()
  TimePoint now_{};
  std::deque<std::uint32_t> fulfilled_;  // nodes whose parent is to be told
  std::deque<std::uint32_t> ready_;      // plugin leaves waiting for a place
  std::deque<std::uint32_t> ready_pods_;  // container and script leaves waiting for one
  std::vector<Timer> timers_;            // a min-heap
  std::uint32_t entry_ = kNoNode, exit_ = kNoNode;
  NodePhase phase_ = NodePhase::kRunning;
  std::string message_;
  std::string fatal_;  // fail()'s message: the run ends in Error with it
  TimePoint started_{};
  TimePoint workflow_deadline_ = TimePoint::max();
  int in_flight_ = 0, unanswered_ = 0, leaf_limit_ = 1;
  int pods_in_flight_ = 0, pod_limit_ = 1;  // spec.parallelism counts pods only
  bool finished_ = false, cancelling_ = false, cancelled_ = false, draining_ = false;
};

// A Scope over a run's variables, as seen from `frame` (the template's node), with a
// loop item and the node being filled (`self`, for retries and node.name).
class NodeScope final : public Scope {
 public:
  NodeScope(const EngineRun& run, std::uint32_t frame, const Json* item, std::uint32_t self,
            const Json* extra = nullptr)
      : run_(run), frame_(frame), item_(item), self_(self), extra_(extra) {}
  std::optional<Json> lookup(std::string_view dotted) const override;

 private:
  const EngineRun& run_;
  std::uint32_t frame_;
  const Json* item_;
  std::uint32_t self_;
  const Json* extra_;  // more names (lastRetry.*), dotted -> value
};

// Small helpers of the engine's files (named, not anonymous: the layer is one unity batch).
namespace engine_detail {
inline bool failedOrError(NodePhase p) { return p == NodePhase::kFailed || p == NodePhase::kError; }
inline bool completed(NodePhase p) { return p == NodePhase::kSucceeded || failedOrError(p); }
inline bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
// The message of a node that did not start because a dag above it was decided (stopDag).
inline constexpr const char* kDecidedFirst = "not run: the outcome of its dag was decided first";
inline std::string underscored(std::string s) {
  for (char& c : s) {
    if (c == '-') c = '_';
  }
  return s;
}
}  // namespace engine_detail
namespace ed = engine_detail;

// Node ids as Argo makes them: the workflow's name, or "<workflow>-<fnv32a(name)>".
std::string argoNodeId(const std::string& workflow, const std::string& node_name);
// A parameter value as Argo keeps it: strings as they are, other values as JSON text.
std::string parameterText(const Json& value);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_ENGINE_STATE_H_

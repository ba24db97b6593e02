// core/workflows/engine.h: runs a WorkflowModel (core/workflows/model.h) as a tree of nodes.
//
// The engine is Argo's controller in one process: a node per template call (and per loop
// item, retry attempt, steps group), each Pending -> Running -> Succeeded | Failed |
// Error | Skipped | Omitted, decided by the rules of Argo's workflow/controller
// (operator.go, steps.go, dag.go; docs/decisions.md cites them). Composite nodes schedule
// their children; leaves are handed to LeafCalls, on the workers of a RunEnv
// (core/workflows/run_env.h), which also keeps the time, so tests run on a virtual clock.
// It knows no front end and no deployer: plugin leaves reach the dispatcher through
// LeafCalls, container and script leaves a deployer through it too.
//
// What it honours: dag (dependencies, depends expressions, target), steps groups, `when`,
// withItems / withSequence / withParam, retryStrategy (limit, policy, backoff, factor,
// cap, maxDuration, expression), per-attempt timeout and activeDeadline, parallelism of
// the workflow and of templates, continueOn, failFast, onExit / hooks.exit of calls and of
// the workflow, outputs (parameters from supplied / path / parameter / expression /
// value / default, result, exitCode, global outputs), suspend with a duration.
//
// Thread-safety: run() once, on one thread; the observer is called on that thread.
// cancel() from any thread.
#ifndef PLUGBOARD_CORE_WORKFLOWS_ENGINE_H_
#define PLUGBOARD_CORE_WORKFLOWS_ENGINE_H_

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/defaults.h"
#include "core/base/duration.h"
#include "core/base/expected.h"
#include "core/launch/outcome.h"
#include "core/routing/dispatcher.h"
#include "core/workflows/model.h"
#include "core/workflows/run_env.h"

namespace plugboard::core {

// Argo's node phases; kOmitted is a node whose `depends` can no longer hold.
enum class NodePhase { kPending, kRunning, kSucceeded, kFailed, kError, kSkipped, kOmitted };
std::string_view nodePhaseName(NodePhase phase);  // "Succeeded", as Argo writes it
bool isEnded(NodePhase phase);

// Argo's node types.
enum class NodeType { kPod, kPlugin, kSteps, kStepGroup, kDAG, kTaskGroup, kRetry, kSkipped,
                      kSuspend };
std::string_view nodeTypeName(NodeType type);  // "Pod", "Plugin", "StepGroup", ...

// A node's inputs or outputs as Argo's NodeStatus lists them: parameters (name, value as
// text) in order, and for outputs a result and an exit code. Kept as text, not as JSON, so
// that a node costs little while a large run holds them all; toJson() writes Argo's shape.
struct NodeIO {
  std::vector<std::pair<std::string, std::string>> parameters;
  Part<std::string> result, exit_code;  // out of line: most nodes have neither
  // The typed values a leaf's plugin answered (its outputs.values), kept beside the text
  // parameters for front ends whose values keep their types (not part of Argo's shape).
  Part<Json> values;

  bool empty() const { return parameters.empty() && !result && !exit_code; }
  const std::string* parameter(std::string_view name) const;  // null when not there
  // {"parameters":[{name,value}], "result", "exitCode"} (members present only when set);
  // null when empty.
  Json toJson() const;
  // toJson().dump(2)'s text appended to `out`, as it would be at an indent of `base`
  // spaces (the parameters' lines further in); REQUIRES: !empty().
  void appendJson(std::string& out, std::size_t base) const;
};

struct NodeStatus {
  std::string id;            // unique in the run: "<workflow>-<hash>", as Argo's node ids
  std::string name;          // Argo's full name: "wf.step[0].hello(0:a)"
  std::string display_name;  // "hello(0:a)"
  NodeType type = NodeType::kPod;
  std::string template_name;
  NodePhase phase = NodePhase::kPending;
  std::string message;
  std::string boundary_id;  // the steps/dag node it belongs to
  std::vector<std::string> children;
  NodeIO inputs;   // parameters only
  NodeIO outputs;
  std::optional<std::chrono::steady_clock::time_point> started, finished;
  int attempts = 0;    // a retry node's attempts made (more than its children past the kept)
  int calls = 0;       // a leaf's calls made (handed to LeafCalls), requeues included;
                       // a retry node's: those of its attempts no longer kept
  std::string plugin;  // name@version that answered a plugin leaf
  std::string deployer;  // the deployer that ran it ("native", "process" ...)
  LogLines logs;         // what the plugin logged during a leaf's calls (the last ones)
  Json toJson() const;  // as Argo's NodeStatus (started/finished as RFC 3339 when given)
  // toJson().dump(2)'s text appended to `out`, at an indent of `base` spaces, without
  // building the JSON value.
  void appendJson(std::string& out, std::size_t base) const;
};

struct RunResult {
  std::string workflow;  // the name the run had (generateName filled in)
  std::string uid;
  NodePhase phase = NodePhase::kPending;  // Succeeded, Failed or Error
  std::string message;
  std::vector<NodeStatus> nodes;  // in creation order; nodes[0] is the entry node
  Json outputs = Json::object();  // global outputs: {"parameters":[{name,value}]}
  bool cancelled = false;
  int abandoned = 0;
  Millis duration{0};
  // Argo's WorkflowStatus: phase, message, nodes (keyed by id), outputs, startedAt...
  Json statusJson() const;
  // statusJson().dump(2) written to `out` without holding it whole (a run's nodes one at a
  // time), its lines after the first indented by `level` more.
  void writeStatusJson(std::FILE* out, int level = 0) const;
};

// A leaf to run: its template with every tag filled.
struct LeafCall {
  const Template* tmpl = nullptr;  // the model's template (its kind, retry, outputs)
  // The template as the call sends it, as JSON text: tmpl->original (or the model's
  // fields as JSON) with its tags filled (core/workflows/template_text.h).
  std::string template_text;
  PluginCall plugin;  // kPlugin: key, rpc, deployer as the model has them; args filled
  ContainerRun container;  // kContainer/kScript: filled
  Json inputs = Json::object();  // the node's input parameters: name -> value
  std::string node_id;
  std::string workflow_name;
  std::string workflow_uid;
};

// The outcome of a leaf: Outcome's phase and message; outputs {"parameters": {name:
// value}, "result": text, "exitCode": text}; Running with a requeue asks to be called
// again.
class LeafCalls {
 public:
  virtual ~LeafCalls() = default;
  // On the scheduling thread, cheaply, before each attempt: nullopt to go ahead, or the
  // outcome that ends the node instead (an Error: e.g. no deployer runs containers here).
  virtual std::optional<Outcome> check(const LeafCall& call) = 0;
  // On a worker; blocks until the leaf answers or `control` cancels it.
  virtual Dispatch call(const LeafCall& call, CallControl& control) = 0;
};

class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  virtual void nodeChanged(const NodeStatus& node) = 0;
  virtual void tick() {}  // at least every 250 ms while the run goes on
};

struct EngineOptions {
  int parallel = defaults::kParallel;  // leaves running at once (with the model's own)
  // An attempt's deadline when its template sets no timeout; none: no deadline (Argo's
  // steps have none).
  std::optional<Millis> default_timeout = defaults::kTimeout;
  Millis poll_interval = defaults::kPollInterval;
  Millis cancel_grace = defaults::kCancelGrace;
  std::size_t args_limit = defaults::kArgsLimit;
  // The deepest nesting of template calls: a call this deep ends the run in Error.
  int max_depth = defaults::kMaxDepth;
  // The most nodes a run makes: the call that would make more ends the run in Error.
  std::size_t max_nodes = defaults::kMaxNodes;
  // The attempts of a retried call kept (the latest; at least 1).
  int kept_attempts = defaults::kKeptAttempts;
  // retryPolicy OnTransientError also retries a node whose message this matches (anywhere
  // in it), as Argo's TRANSIENT_ERROR_PATTERN; Argo's own transient messages always do.
  std::optional<std::regex> transient_error_pattern;
};

// Argo's errorsutil.IsTransientErr applied to a node's message, as its controller applies
// it for retryPolicy OnTransientError: a message naming a transient network, etcd or
// client-side throttling error, or matching `pattern`.
bool isTransientMessage(const std::string& message, const std::optional<std::regex>& pattern);

class Engine {
 public:
  // `calls` must outlive the run and its abandoned calls. `env` null: a WorkerPoolEnv of
  // `options.parallel` workers, owned by the engine.
  Engine(LeafCalls& calls, EngineOptions options, EngineObserver* observer = nullptr,
         RunEnv* env = nullptr);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // REQUIRES: `model` passed checkModel(); `parameters` from resolveParameters().
  RunResult run(const WorkflowModel& model, const Json& parameters);
  void cancel();
  // Resumes every suspended node that waits to be resumed (a suspend template without a
  // duration, as `argo resume` does); one with a duration ends early too.
  void resume();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The workflow's parameters: the declared defaults overridden by `given` (name -> value,
// from --param / --parameter-file); errors name an unknown or missing parameter and a
// value outside an enum.
Expected<Json> resolveParameters(const WorkflowModel& model, const Json& given);

// What the model alone can tell, before anything runs: unknown templates, cycles in a dag,
// unknown dependencies, variables no scope can give (as `argo lint`), bad expressions,
// retry/loop shapes. Every problem with its SourceRef.
std::vector<ModelProblem> checkModel(const WorkflowModel& model);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_ENGINE_H_

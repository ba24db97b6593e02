// core/runtime/runtime.h: what a command runs on, made from its configuration.
//
// The CLI parses flags into a Config and hands it here. Runtime::open() assembles what the
// one-shot commands (run, exec, call, validate) share: the catalog of the plugin
// directories (each refused file logged as a warning; a directory that cannot be read is
// an error), the launcher (deployers, registry,
// placement, trust; core/launch/launcher.h) and a dispatcher that opens plugins through it.
// openLiveRuntime() assembles what `serve` hosts (core/routing/live_runtime.h): the same launcher,
// keeping plugins only while a generation holds them, the plugins only the registry knows,
// and watches on the deployer directories and the registry's files.
//
// Thread-safety: a Runtime is made on one thread; its launcher and dispatcher are
// thread-safe. Calls that ignored cancellation may still run plugin code that uses the
// runtime: then it must outlive the process (the CLI exits without destroying it).
#ifndef PLUGBOARD_CORE_RUNTIME_RUNTIME_H_
#define PLUGBOARD_CORE_RUNTIME_RUNTIME_H_

#include <map>
#include <memory>
#include <string>

#include "core/manifests/catalog.h"
#include "core/runtime/config.h"
#include "core/routing/dispatcher.h"
#include "core/base/expected.h"
#include "core/base/work_pool.h"
#include "core/launch/launcher.h"
#include "core/routing/live_runtime.h"
#include "core/frontends/front_end.h"
#include "core/workflows/engine.h"
#include "core/workflows/workflow.h"
#include "core/workflows/workflow_check.h"

namespace plugboard::core {

// A workflow ready to run: parsed, inputs resolved, checked against the plugins.
struct PreparedWorkflow {
  Workflow workflow;
  Json inputs;
  WorkflowModel model;  // the workflow as the one model, which the engine runs
};

// Where a workflow step runs, as `run` would place it; nothing is started.
struct StepPlace {
  std::string plugin;    // name@version as resolved; the key as written when no plugin has it
  std::string deployer;  // by name; empty when not known (polled, or it cannot be placed)
  bool polled = false;   // no plugin has the key: the providers of the step's RPC are polled
  Json options = Json::object();  // the deployer's options the step or [deploy] gives
};

class Runtime {
 public:
  // Errors: a plugin directory cannot be read (it does not exist, cannot be listed or is
  // refused by the trust rules: each named once, where every step would otherwise say its
  // plugin is missing; serve's live runtime goes on without it instead); the registry
  // file cannot be read or parsed. `isolate_polls` for a command
  // that answers a request as `serve` does (exec): LaunchOptions::isolate_polls.
  static Expected<std::unique_ptr<Runtime>> open(const Config& config, bool isolate_polls = false);
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const Config& config() const { return config_; }
  const Catalog& catalog() const { return catalog_; }
  Launcher& launcher() { return *launcher_; }
  Dispatcher& dispatcher() { return *dispatcher_; }
  // The steady clock with timers that bounds the starts prepare() makes (StartDeadline);
  // its timer thread starts with its first timer.
  AlarmClock& clock() const { return *clock_; }

  // Loads `file`, resolves its inputs from `params` and checks it against the plugins
  // (each step placed through the launcher, nothing started). The error lists every
  // problem, one per line, each naming the file, line, column and step.
  // `starts` bounds the plugins it starts to read their manifests (CheckStarts; its deadlines
  // are timers on clock() unless it names a clock of its own).
  Expected<PreparedWorkflow> prepare(const std::string& file,
                                     const std::map<std::string, std::string>& params,
                                     const CheckStarts& starts = {}) const;
  // Loads the deployer of every step that runs through one of its own, so that a deployer
  // that cannot work here (podman not installed, say) fails the run before any step
  // starts. The error lists each such step and why, one per line.
  Status deployersReady(const Workflow& workflow);
  // Where `step` runs: its plugin and deployer, decided as for a run. Starts nothing.
  StepPlace place(const WorkflowStep& step) const;

  // A model workflow's parameters (`given`: name -> value, from a parameter file and
  // --param), and each plugin template routed as a run routes it, nothing started. The
  // error lists every problem, one per line, each with file:line and the template.
  Expected<Json> prepareModel(const WorkflowModel& model, const Json& given) const;

 private:
  Runtime(Config config, Catalog catalog, std::shared_ptr<const PluginSources> sources,
          std::shared_ptr<Launcher> launcher);

  const Config config_;
  const std::unique_ptr<AlarmClock> clock_ = steadyClock();  // outlives what has timers on it
  const Catalog catalog_;
  const std::shared_ptr<const PluginSources> sources_;
  const std::shared_ptr<Launcher> launcher_;
  std::unique_ptr<Dispatcher> dispatcher_;
};

// A workflow file of a peer's format (core/frontends/front_end.h), read and checked by its
// front end and by checkModel(). The error lists every problem, one per line.
Expected<WorkflowModel> readModel(const std::filesystem::path& file, const ModelSource& source);

// The launcher of `config`: its deployer directories scanned (refused modules logged) and
// its registry read. Errors: a registry file that cannot be read or parsed.
Expected<std::shared_ptr<Launcher>> makeLauncher(const Config& config, bool keep_started = true,
                                                 bool isolate_polls = false);

// The runtime `serve` hosts, not yet started (LiveRuntime::start()). Errors: the registry
// file cannot be read or parsed.
Expected<std::unique_ptr<LiveRuntime>> openLiveRuntime(const Config& config);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_RUNTIME_RUNTIME_H_

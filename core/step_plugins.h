// core/step_plugins.h: the plugins of a run's steps that go through a deployer of their own.
//
// A workflow step whose `deploy` names a deployer, or whose plugin is known only to the
// registry (no plugin file in the plugin directories), is run by a deployer chosen for it:
// the named one, or the first by priority that deploys one of the plugin's artifact kinds.
// target() says which deployer and artifact without starting anything (for `validate`);
// start() starts the plugin, at most once per run for the same deployer, artifact (by
// digest) and options, and shares it among the steps that use it. The plugin's manifest,
// and so its schemas, come from its own deployer.
//
// Thread-safety: all members may be called from several threads.
#ifndef PLUGBOARD_CORE_STEP_PLUGINS_H_
#define PLUGBOARD_CORE_STEP_PLUGINS_H_

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/deployer.h"
#include "core/registry.h"
#include "core/workflow.h"

namespace plugboard::core {

struct StepTarget {
  const CatalogEntry* deployer = nullptr;
  std::string plugin;    // name@version as resolved
  std::string kind;      // the artifact kind used
  Json artifact;         // as the registry (or the plugin directory) gives it
  Json options = Json::object();
  std::string describe() const;  // "plugin hello@1.0.0 through deployer 'process' (native artifact)"
};

// The deployer and artifact for registry entry `entry`: through `deployer_name` when not
// empty (its options checked), else the first deployer by priority with an artifact for it.
Expected<StepTarget> chooseTarget(const DeployerSet& deployers, const RegistryEntry& entry,
                                  const std::string& deployer_name, const Json& options);

struct StartedPlugin {
  std::unique_ptr<PluginHandle> handle;
  std::mutex serial;  // held around calls to a serial plugin
};

class StepPlugins {
 public:
  // `registry` may be null. `deployers` and `catalog` must outlive this object.
  StepPlugins(DeployerSet& deployers, const Registry* registry, const Catalog& catalog);

  // The deployer and artifact for `step`, or nullopt when the step runs through the
  // dispatcher (no `deploy`, and its plugin is in the plugin directories).
  Expected<std::optional<StepTarget>> target(const WorkflowStep& step) const;
  // Starts the plugin of `target`, or returns the one already started for it.
  Expected<std::shared_ptr<StartedPlugin>> start(const StepTarget& target);

 private:
  DeployerSet& deployers_;
  const Registry* registry_;
  const Catalog& catalog_;
  struct Slot {
    std::mutex mu;  // held while starting
    std::optional<Expected<std::shared_ptr<StartedPlugin>>> started;
  };
  std::mutex mu_;  // guards slots_ and targets_
  std::map<std::string, std::shared_ptr<Slot>> slots_;  // by deployer, artifact digest, options
  // By deployer, artifact and options as written: a step's later calls (requeues,
  // retries) find their plugin without hashing the artifact's file again.
  std::map<std::string, std::shared_ptr<Slot>> targets_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_STEP_PLUGINS_H_

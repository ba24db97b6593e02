// core/launch/deployer.h: deployer modules and the plugins they start.
//
// A deployer module is a `.so` of kind "deployer" (plugboard/deployer.hpp) found in a
// deployer directory like a plugin in a plugin directory: its manifest says which artifact
// kinds it deploys and which configuration keys it takes. DeployerModule::load() loads
// one and creates it with its configuration; open() turns an artifact (a registry entry,
// "path" made absolute) and per-step options into a PluginHandle that the dispatcher and
// the runner call like an in-process plugin. The core knows no deployer by name.
//
// DeployerSet holds the deployers of a run and picks one for an artifact kind.
//
// Thread-safety: open() and the handles' calls may run on several threads at once. A
// handle keeps its module loaded; the module is destroyed after its last handle closes.
#ifndef PLUGBOARD_CORE_LAUNCH_DEPLOYER_H_
#define PLUGBOARD_CORE_LAUNCH_DEPLOYER_H_

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/manifests/catalog.h"
#include "core/base/expected.h"
#include "core/manifests/manifest.h"
#include "core/launch/plugin_handle.h"
#include "core/launch/start_control.h"
#include "core/manifests/trust.h"

namespace plugboard::core {

class DeployerModule : public std::enable_shared_from_this<DeployerModule> {
 public:
  // Loads `entry` (a catalog entry of kind "deployer") and creates the deployer with
  // `config` (a JSON object). The file is opened and checked against `trust` once more
  // (host::openTrusted()), its manifest section must still be entry's, and it is loaded by
  // the path that resolved to, in which no link is left. Errors name the deployer and its
  // file.
  static Expected<std::shared_ptr<DeployerModule>> load(const CatalogEntry& entry,
                                                        const Json& config = Json::object(),
                                                        const TrustPolicy& trust = {});
  ~DeployerModule();
  DeployerModule(const DeployerModule&) = delete;
  DeployerModule& operator=(const DeployerModule&) = delete;

  const Manifest& manifest() const;
  const std::string& name() const { return manifest().name; }

  // Starts the plugin `artifact` names, with `options` (a JSON object). The deployer gets
  // `trust` as the artifact's member "trust" (plugboard/host/trust.h), replacing any the
  // artifact had, to check the files it turns into code. The handle's manifest is the
  // plugin's, as the deployer read it.
  // `control`, when given, cancels the start while it is under way (a deployer of ABI 1.1
  // or later stops it and removes what it made; an older one finishes its start).
  Expected<std::unique_ptr<PluginHandle>> open(const Json& artifact,
                                               const Json& options = Json::object(),
                                               const host::TrustRules& trust = {},
                                               StartControl* control = nullptr);
  // The runtime is about to exit without closing this module's plugins: the deployer
  // removes at once what would outlive the process (plugboard/deployer.hpp, abandon()).
  void abandon();

 private:
  struct Impl;
  explicit DeployerModule(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Checks per-step `options` against a deployer's manifest ("config": key -> {type}).
// Errors name the key and say what was expected. `from_workflow`: the options are a
// workflow step's, which may set only the options the manifest marks "step": true (those
// that cannot reach the host: limits, timeouts, pull policy); every other option is the
// configuration file's alone (docs/security.md).
Status checkDeployerOptions(const Manifest& deployer, const Json& options,
                            bool from_workflow = false);

// The deployers of a runtime: a catalog of deployer modules, each loaded and created on
// first use with its configuration from `configs` (by deployer name; {} when absent).
// refresh() scans the deployer directories again (serve calls it when they change): new
// and changed modules become usable; modules in use stay loaded until their plugins close.
class DeployerSet {
 public:
  DeployerSet() : DeployerSet(Catalog(), {}) {}
  DeployerSet(Catalog catalog, std::map<std::string, Json> configs);
  // A set that can refresh() from `dirs`.
  DeployerSet(std::vector<std::filesystem::path> dirs, TrustPolicy trust,
              std::map<std::string, Json> configs);

  // Rescans the directories; true when the set of modules changed. Logs each change.
  bool refresh();
  // The directories scanned (empty for a set made from a catalog).
  const std::vector<std::filesystem::path>& dirs() const { return dirs_; }

  // The current catalog. It, and every entry pointer taken from it, stays valid for the
  // set's lifetime, also after a refresh().
  const Catalog& catalog() const;
  // The deployer named `name` (case-insensitive), or nullptr.
  const CatalogEntry* find(const std::string& name) const;
  // Every deployer (its highest version), highest priority first, then by name: the
  // default order.
  std::vector<const CatalogEntry*> inOrder() const;
  // Those of inOrder() that deploy artifact kind `kind`.
  std::vector<const CatalogEntry*> forKind(const std::string& kind) const;
  // The loaded deployer for `entry` (loaded on first use; a failure is kept and repeated).
  Expected<std::shared_ptr<DeployerModule>> module(const CatalogEntry& entry);
  // DeployerModule::abandon() on every module loaded: before the process exits with
  // plugins still running (calls it gave up on), so that none of them outlives it.
  void abandon();

 private:
  static std::string identity(const CatalogEntry& entry);  // file, size and modification time

  std::vector<std::filesystem::path> dirs_;
  TrustPolicy trust_;
  std::map<std::string, Json> configs_;
  mutable std::mutex mu_;  // guards everything below
  std::vector<std::unique_ptr<Catalog>>
      catalogs_;  // the current one last; older ones kept for their entries
  std::map<std::string, Expected<std::shared_ptr<DeployerModule>>> loaded_;  // by identity()
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_LAUNCH_DEPLOYER_H_

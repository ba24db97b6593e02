#include "core/step_plugins.h"

#include <fcntl.h>
#include <unistd.h>


#include <spdlog/spdlog.h>

#include "core/text.h"
#include "core/trust.h"

namespace plugboard::core {
namespace {

// What identifies an artifact's content: the SHA-256 of its file when it names one (so a
// changed file is a different plugin), else the artifact itself.
std::string artifactDigest(const Json& artifact) {
  if (auto p = artifact.find("path"); p != artifact.end() && p->is_string()) {
    const int fd = ::open(p->get_ref<const std::string&>().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      auto digest = sha256Hex(fd);
      ::close(fd);
      if (digest) return "sha256:" + *digest;
    }
  }
  return artifact.dump();
}

}  // namespace

std::string StepTarget::describe() const {
  return "plugin " + plugin + " through deployer '" + deployer->manifest.name + "' (" + kind + " artifact)";
}

Expected<StepTarget> chooseTarget(const DeployerSet& deployers, const RegistryEntry& entry,
                                  const std::string& deployer_name, const Json& options) {
  const std::string plugin = entry.name + "@" + entry.version.text();
  std::vector<std::string> kinds;
  for (const auto& [kind, _] : entry.artifacts) kinds.push_back(kind);

  auto pick = [&](const CatalogEntry& deployer) -> std::optional<StepTarget> {
    for (const auto& kind : deployer.manifest.deploys) {
      if (auto a = entry.artifacts.find(kind); a != entry.artifacts.end()) {
        return StepTarget{&deployer, plugin, kind, a->second, options};
      }
    }
    return std::nullopt;
  };

  if (!deployer_name.empty()) {
    const CatalogEntry* deployer = deployers.find(deployer_name);
    if (deployer == nullptr) {
      std::vector<std::string> names;
      for (const auto& e : deployers.catalog().entries()) names.push_back(e.manifest.name);
      return Error("no deployer '" + deployer_name + "' (installed deployers: " + join(names) + ")");
    }
    auto t = pick(*deployer);
    if (!t) {
      return Error("deployer '" + deployer->manifest.name + "' deploys " + join(deployer->manifest.deploys, " or ") +
                   " artifacts, and plugin " + plugin + " has only: " + join(kinds));
    }
    if (Status st = checkDeployerOptions(deployer->manifest, t->options); !st) return st.error();
    return std::move(*t);
  }
  // The default order: the first deployer, by priority, that has an artifact for the plugin.
  for (const CatalogEntry* deployer : deployers.inOrder()) {
    if (auto t = pick(*deployer)) return std::move(*t);
  }
  return Error("no installed deployer deploys any artifact of plugin " + plugin + " (it has: " + join(kinds) + ")");
}

StepPlugins::StepPlugins(DeployerSet& deployers, const Registry* registry, const Catalog& catalog)
    : deployers_(deployers), registry_(registry), catalog_(catalog) {}

Expected<std::optional<StepTarget>> StepPlugins::target(const WorkflowStep& step) const {
  if (step.deployer.empty() && catalog_.find(step.plugin, step.version) != nullptr) {
    return std::optional<StepTarget>();  // the dispatcher's default path
  }
  const Registry empty;
  auto entry = (registry_ ? *registry_ : empty).resolve(step.plugin, step.version, &catalog_);
  if (!entry) {
    if (step.deployer.empty()) return std::optional<StepTarget>();  // reported as an unknown plugin
    return entry.error();
  }
  auto target = chooseTarget(deployers_, *entry, step.deployer, step.deploy_options);
  if (!target) return target.error();
  return std::optional<StepTarget>(std::move(*target));
}

Expected<std::shared_ptr<StartedPlugin>> StepPlugins::start(const StepTarget& target) {
  const std::string as_written =
      target.deployer->label + "\n" + target.artifact.dump() + "\n" + target.options.dump();
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard lock(mu_);
    if (auto it = targets_.find(as_written); it != targets_.end()) slot = it->second;
  }
  if (!slot) {
    const std::string key =
        target.deployer->label + "\n" + artifactDigest(target.artifact) + "\n" + target.options.dump();
    std::lock_guard lock(mu_);
    auto& s = slots_[key];
    if (!s) s = std::make_shared<Slot>();
    slot = targets_.emplace(as_written, s).first->second;
  }
  std::lock_guard lock(slot->mu);
  if (slot->started) return *slot->started;
  auto module = deployers_.module(*target.deployer);
  if (!module) {
    slot->started = Expected<std::shared_ptr<StartedPlugin>>(module.error());
    return *slot->started;
  }
  auto handle = (*module)->open(target.artifact, target.options);
  if (!handle) {
    slot->started = Expected<std::shared_ptr<StartedPlugin>>(
        Error(target.describe() + ": " + handle.error().message(), handle.error().code()));
  } else {
    auto started = std::make_shared<StartedPlugin>();
    started->handle = std::move(*handle);
    spdlog::info("started {}", target.describe());
    slot->started = Expected<std::shared_ptr<StartedPlugin>>(std::move(started));
  }
  return *slot->started;
}

}  // namespace plugboard::core

#include "core/runtime/runtime.h"

#include <spdlog/spdlog.h>

#include "core/launch/registry_plugins.h"
#include "core/workflows/workflow_check.h"

namespace plugboard::core {
namespace {

// The plugin a step names, with the deployer it chooses.
PluginRef refOf(const WorkflowStep& step) {
  return {step.plugin, step.version, step.deployer, step.deploy_options};
}

}  // namespace

Expected<std::shared_ptr<Launcher>> makeLauncher(const Config& config, bool keep_started,
                                                 bool isolate_polls) {
  auto deployers =
      std::make_shared<DeployerSet>(config.deployer_dirs, config.trust, config.deployer_options);
  for (const auto& [name, _] : config.deployer_options) {
    if (deployers->find(name) == nullptr) {
      spdlog::warn("the config has options for deployer '{}', which is not installed (yet)", name);
    }
  }
  std::shared_ptr<const Registry> registry;
  if (!config.registry.empty()) {
    auto loaded = Registry::load(config.registry, config.trust);
    if (!loaded) return loaded.error();
    registry = std::make_shared<const Registry>(std::move(*loaded));
  }
  return std::make_shared<Launcher>(
      std::move(deployers), std::move(registry),
      LaunchOptions{config.trust, config.plugin_deploy, keep_started, isolate_polls});
}

Runtime::Runtime(Config config, Catalog catalog, std::shared_ptr<Launcher> launcher)
    : config_(std::move(config)), catalog_(std::move(catalog)), launcher_(std::move(launcher)) {
  dispatcher_ = std::make_unique<Dispatcher>(
      catalog_, DispatcherOptions{.priority = config_.priority,
                                  .open = [launcher = launcher_](const CatalogEntry& entry,
                                                                 bool polled) {
                                    return launcher->open(entry, polled);
                                  }});
}

Expected<std::unique_ptr<Runtime>> Runtime::open(const Config& config, bool isolate_polls) {
  Catalog catalog = Catalog::scan(config.plugin_dirs, config.trust);
  for (const auto& p : catalog.problems()) spdlog::warn("{}", p.oneLine());
  for (const auto& c : catalog.conflicts()) spdlog::warn("{}", c.oneLine());
  auto launcher = makeLauncher(config, /*keep_started=*/true, isolate_polls);
  if (!launcher) return launcher.error();
  // Registry plugins that may be polled are polled as in `serve`, started when first polled.
  if (const Registry* registry = (*launcher)->registry())
    catalog.addPollOnly(pollOnlyEntries(*registry, **launcher, catalog));
  return std::unique_ptr<Runtime>(new Runtime(config, std::move(catalog), std::move(*launcher)));
}

Expected<PreparedWorkflow> Runtime::prepare(const std::string& file,
                                            const std::map<std::string, std::string>& params,
                                            const CheckStarts& starts) const {
  auto loaded = loadWorkflow(file);
  std::string problems;
  for (const auto& p : loaded.problems) problems += (problems.empty() ? "" : "\n") + p.oneLine();
  if (!loaded.ok()) return Error(problems);
  auto inputs = resolveInputs(*loaded.workflow, params);
  if (!inputs) return Error(file + ": " + inputs.error().message());
  for (const auto& p :
       checkWorkflow(*loaded.workflow, catalog_, *inputs, launcher_.get(), starts)) {
    problems += (problems.empty() ? "" : "\n") + p.oneLine();
  }
  if (!problems.empty()) return Error(problems);
  return PreparedWorkflow{std::move(*loaded.workflow), std::move(*inputs)};
}

Status Runtime::deployersReady(const Workflow& workflow) {
  std::string problems;
  for (const auto& step : workflow.steps) {
    const PluginRef ref = refOf(step);
    if (launcher_->dispatched(ref, catalog_)) continue;
    auto target = launcher_->place(ref, &catalog_);
    if (!target) continue;  // checkWorkflow reported it
    if (auto module = launcher_->deployers().module(*target->deployer); !module) {
      problems += (problems.empty() ? "" : "\n") + workflow.file.string() + ": step '" + step.id +
                  "' cannot run: " + module.error().message();
    }
  }
  if (!problems.empty()) return Error(problems);
  return Status::Ok();
}

StepPlace Runtime::place(const WorkflowStep& step) const {
  const PluginRef ref = refOf(step);
  if (launcher_->dispatched(ref, catalog_)) {
    // Through the dispatcher: the plugin-directory file it finds, placed when it loads.
    const CatalogEntry* entry = catalog_.find(step.plugin, step.version);
    if (entry == nullptr) return {step.plugin, "", true};
    auto target = launcher_->place(*entry);
    if (!target) return {entry->label, "", false};
    return {entry->label, target->deployer->manifest.name, false, target->options};
  }
  auto target = launcher_->place(ref, &catalog_);
  if (!target) return {step.plugin, "", false};
  return {target->plugin, target->deployer->manifest.name, false, target->options};
}

Expected<std::unique_ptr<LiveRuntime>> openLiveRuntime(const Config& config) {
  auto launcher = makeLauncher(config, /*keep_started=*/false, /*isolate_polls=*/true);
  if (!launcher) return launcher.error();
  std::shared_ptr<Launcher> shared = std::move(*launcher);
  auto runtime = std::make_unique<LiveRuntime>(
      config.plugin_dirs, config.trust,
      DispatcherOptions{.priority = config.priority,
                        .open = [shared](const CatalogEntry& entry, bool polled) {
                          return shared->open(entry, polled);
                        }});
  runtime->nameDeployersWith(
      [shared](const CatalogEntry& entry) { return shared->deployerOf(entry); });
  // Deployer modules dropped into their directories become usable too.
  runtime->watchAlso([dirs = config.deployer_dirs] { return dirs; },
                     [deployers = shared->sharedDeployers()] { return deployers->refresh(); });
  if (const Registry* registry = shared->registry()) {
    // Plugins only the registry knows are started when a generation is built (their
    // manifests come from their deployers) and started again when their files change.
    auto plugins = std::make_shared<RegistryPlugins>(*shared, config.registry, *registry);
    runtime->watchAlso([plugins] { return plugins->watchedDirs(); },
                       [plugins] { return plugins->changed(); });
    runtime->addEntriesWith([plugins, shared](auto& entries, auto& problems) {
      plugins->addEntries(entries, problems);
    });
  }
  return runtime;
}

}  // namespace plugboard::core

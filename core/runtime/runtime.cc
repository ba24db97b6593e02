#include "core/runtime/runtime.h"

#include <spdlog/spdlog.h>

#include "core/frontends/toml_workflow.h"
#include "core/launch/registry_plugins.h"
#include "core/workflows/leaf_calls.h"
#include "core/workflows/workflow_check.h"

namespace plugboard::core {
namespace {

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
  if (!config.extra_plugins.empty()) {
    Registry with = registry ? *registry : Registry();
    with.add(config.extra_plugins);
    registry = std::make_shared<const Registry>(std::move(with));
  }
  return std::make_shared<Launcher>(std::move(deployers), std::move(registry),
                                    LaunchOptions{config.trust, config.plugin_deploy, keep_started,
                                                  isolate_polls, config.containment});
}

Runtime::Runtime(Config config, Catalog catalog, std::shared_ptr<const PluginSources> sources,
                 std::shared_ptr<Launcher> launcher)
    : config_(std::move(config)),
      catalog_(std::move(catalog)),
      sources_(std::move(sources)),
      launcher_(std::move(launcher)) {
  dispatcher_ = std::make_unique<Dispatcher>(
      catalog_, DispatcherOptions{.priority = config_.priority, .launcher = launcher_}, sources_);
}

Expected<std::unique_ptr<Runtime>> Runtime::open(const Config& config, bool isolate_polls) {
  Catalog catalog = Catalog::scan(config.plugin_dirs, config.trust);
  // A plugin directory that cannot be read ends a one-shot command here, said once, rather
  // than as each step's missing plugin.
  std::string unreadable;
  for (const auto& p : catalog.directoryProblems(config.plugin_dirs)) {
    unreadable += (unreadable.empty() ? "" : "\n") + p.oneLine();
  }
  if (!unreadable.empty()) return Error(unreadable);
  for (const auto& p : catalog.problems()) spdlog::warn("{}", p.oneLine());
  for (const auto& c : catalog.conflicts()) spdlog::warn("{}", c.oneLine());
  auto launcher = makeLauncher(config, /*keep_started=*/true, isolate_polls);
  if (!launcher) return launcher.error();
  // Registry plugins that may be polled are polled as in `serve`, started when first polled.
  auto sources = std::make_shared<PluginSources>();
  if (const Registry* registry = (*launcher)->registry()) {
    auto poll_only = pollOnlyEntries(*registry, **launcher, catalog);
    for (const auto& e : poll_only) sources->add(e, PluginSource::registry());
    catalog.addPollOnly(std::move(poll_only));
  }
  return std::unique_ptr<Runtime>(
      new Runtime(config, std::move(catalog), std::move(sources), std::move(*launcher)));
}

Expected<PreparedWorkflow> Runtime::prepare(const std::string& file,
                                            const std::map<std::string, std::string>& params,
                                            const CheckStarts& given) const {
  CheckStarts starts = given;
  if (starts.clock == nullptr) starts.clock = clock_.get();
  auto loaded = loadWorkflow(file);
  std::string problems;
  for (const auto& p : loaded.problems) problems += (problems.empty() ? "" : "\n") + p.oneLine();
  if (!loaded.ok()) return Error(problems);
  auto inputs = resolveInputs(*loaded.workflow, params);
  if (!inputs) return Error(file + ": " + inputs.error().message());
  for (const auto& p :
       checkWorkflow(*loaded.workflow, catalog_, *inputs, dispatcher_.get(), starts)) {
    problems += (problems.empty() ? "" : "\n") + p.oneLine();
  }
  if (!problems.empty()) return Error(problems);
  WorkflowModel model = tomlModel(*loaded.workflow);
  // The front end's model passes the engine's checks whenever loadWorkflow() passed; a
  // problem here is the front end's, reported as any other.
  for (const auto& p : checkModel(model)) problems += (problems.empty() ? "" : "\n") + p.oneLine();
  if (!problems.empty()) return Error(problems);
  return PreparedWorkflow{std::move(*loaded.workflow), std::move(*inputs), std::move(model)};
}

Status Runtime::deployersReady(const Workflow& workflow) {
  std::string problems;
  for (const auto& step : workflow.steps) {
    // Only a step placed through a deployer of its own, or a registry artifact, loads its
    // deployer here; a step that cannot be placed was reported by checkWorkflow.
    const Route route = dispatcher_->resolve(routeQueryOf(step));
    if (route.kind != Route::Kind::kTarget) continue;
    if (auto module = launcher_->deployers().module(*route.target->deployer); !module) {
      problems += (problems.empty() ? "" : "\n") + workflow.file.string() + ": step '" + step.id +
                  "' cannot run: " + module.error().message();
    }
  }
  if (!problems.empty()) return Error(problems);
  return Status::Ok();
}

StepPlace Runtime::place(const WorkflowStep& step) const {
  const Route route = dispatcher_->resolve(routeQueryOf(step));
  switch (route.kind) {
    case Route::Kind::kPlugin: {  // the plugin-directory file, placed when it loads
      auto target = launcher_->place(*route.entry, dispatcher_->sourceOf(*route.entry));
      if (!target) return {route.entry->label, "", false};
      return {route.entry->label, target->deployer->manifest.name, false, target->options};
    }
    case Route::Kind::kTarget:
      return {route.target->plugin, route.target->deployer->manifest.name, false,
              route.target->options};
    case Route::Kind::kPoll:
      return {step.plugin, "", true};
    case Route::Kind::kNone:
    case Route::Kind::kConflict:
      break;
  }
  return {step.plugin, "", false};
}

Expected<WorkflowModel> readModel(const std::filesystem::path& file, const ModelSource& source) {
  LoadedModel loaded = loadModel(file, source);
  // The model's own checks only once the file read cleanly: what the front end could not
  // read would come back from them as second, derived problems.
  if (loaded.model && loaded.problems.empty()) {
    for (auto& p : checkModel(*loaded.model)) loaded.problems.push_back(std::move(p));
  }
  std::string problems;
  for (const auto& p : loaded.problems) problems += (problems.empty() ? "" : "\n") + p.oneLine();
  if (!loaded.model || !problems.empty()) return Error(problems);
  return std::move(*loaded.model);
}

Expected<Json> Runtime::prepareModel(const WorkflowModel& model, const Json& given) const {
  auto parameters = resolveParameters(model, given);
  if (!parameters) return Error(model.file.string() + ": " + parameters.error().message());
  std::string problems;
  for (const auto& t : model.templates) {
    if (t.kind != Template::Kind::kPlugin) continue;
    const Route route = dispatcher_->resolve(routeQuery(t.plugin));
    if (route.kind == Route::Kind::kNone && t.plugin.poll) continue;  // polled: decided per call
    if (route.kind == Route::Kind::kNone || route.kind == Route::Kind::kConflict) {
      problems += (problems.empty() ? "" : "\n") +
                  ModelProblem{t.where, "template '" + t.name + "'", route.reason}.oneLine();
    }
  }
  if (!problems.empty()) return Error(problems);
  return std::move(*parameters);
}

Expected<std::unique_ptr<LiveRuntime>> openLiveRuntime(const Config& config) {
  auto launcher = makeLauncher(config, /*keep_started=*/false, /*isolate_polls=*/true);
  if (!launcher) return launcher.error();
  std::shared_ptr<Launcher> shared = std::move(*launcher);
  auto runtime = std::make_unique<LiveRuntime>(
      config.plugin_dirs, config.trust,
      DispatcherOptions{.priority = config.priority, .launcher = shared});
  // Deployer modules dropped into their directories become usable too.
  runtime->watchAlso([dirs = config.deployer_dirs] { return dirs; },
                     [deployers = shared->sharedDeployers()] { return deployers->refresh(); });
  if (const Registry* registry = shared->registry()) {
    // Plugins only the registry knows are started when a generation is built (their
    // manifests come from their deployers) and started again when their files change.
    auto plugins = std::make_shared<RegistryPlugins>(*shared, config.registry, *registry);
    runtime->watchAlso([plugins] { return plugins->watchedDirs(); },
                       [plugins] { return plugins->changed(); });
    runtime->addEntriesWith([plugins, shared](auto& entries, auto& sources, auto& problems) {
      plugins->addEntries(entries, sources, problems);
    });
  }
  return runtime;
}

}  // namespace plugboard::core

#include "tools/plugboard/arcaflow_cli.h"

#include <unistd.h>

#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <optional>

#include "core/runtime/exports.h"
#include "tools/plugboard/cli.h"
#include "tools/plugboard/node_tree.h"
#include "tools/plugboard/run_model.h"
#include "tools/plugboard/signals.h"

namespace plugboard::cli {
namespace po = boost::program_options;

namespace {

std::filesystem::path inContext(const po::variables_map& vm, const std::filesystem::path& file) {
  if (file.is_absolute() || !vm.count("context")) return file;
  return std::filesystem::path(vm["context"].as<std::string>()) / file;
}

// The engine's config file (config/config.go: log, deployers, plugins, logged_outputs)
// applied to plugboard's config: log.level; deployers of images run with podman here
// (docker and kubernetes are said to, in one line each); python plugins run with the atp
// deployer's interpreter. False after printing why.
// `image_options` gets the atp deployer's options the image deployer's settings map to:
// deployment.host.NetworkMode (the podman deployer's HostConfig, as podman's --network:
// "host" shares the host's network namespace) is its `network`.
bool applyEngineConfig(const std::filesystem::path& file, std::string& level,
                       core::Json& image_options) {
  auto read = core::readArcaflowInput(file);  // YAML, typed as the engine reads it
  if (!read) {
    std::cerr << read.error().message() << "\n";
    return false;
  }
  if (read->is_null()) return true;
  if (!read->is_object()) {
    std::cerr << file.string() << ": the engine's config is a mapping\n";
    return false;
  }
  for (const auto& [key, value] : read->items()) {
    if (key == "log") {
      if (value.is_object() && value.contains("level") && value["level"].is_string()) {
        level = value["level"].get<std::string>();
        if (level == "warning") level = "warn";
      }
    } else if (key == "deployers") {
      if (!value.is_object()) continue;
      for (const auto& [kind, deployer] : value.items()) {
        const std::string name = deployer.is_object() && deployer.contains("deployer_name") &&
                                         deployer["deployer_name"].is_string()
                                     ? deployer["deployer_name"].get<std::string>()
                                     : std::string();
        if (kind == "image" && (name == "docker" || name == "kubernetes")) {
          std::cerr << "plugboard: " << file.string() << ": deployers.image: deployer_name '"
                    << name << "' runs with podman here (plugboard's atp deployer)\n";
        }
        if (kind != "image" || !deployer.is_object()) continue;
        const core::Json deployment = deployer.value("deployment", core::Json::object());
        const core::Json host =
            deployment.is_object() ? deployment.value("host", core::Json()) : core::Json();
        if (!host.is_object()) continue;
        if (auto mode = host.find("NetworkMode"); mode != host.end()) {
          if (!mode->is_string() || mode->get<std::string>().empty()) {
            std::cerr << file.string()
                      << ": deployers.image.deployment.host.NetworkMode must be a string\n";
            return false;
          }
          image_options["network"] = mode->get<std::string>();
        }
      }
    } else if (key != "plugins" && key != "logged_outputs") {
      std::cerr << file.string() << ": unknown key '" << key
                << "' (the engine's config has log, deployers, plugins, logged_outputs)\n";
      return false;
    }
  }
  return true;
}

bool isYamlFile(const std::filesystem::path& file) {
  const std::string ext = file.extension().string();
  return ext == ".yaml" || ext == ".yml";
}

// plugboard's configuration for an Arcaflow workflow: --config names the engine's
// config.yaml (applied by applyEngineConfig(), then taken off `vm`) or plugboard's own
// TOML. Nullopt after printing why.
std::optional<core::Config> arcaflowSettings(po::variables_map& vm, std::string& engine_level,
                                             core::Json& image_options, bool& engine_file) {
  if (vm.count("config") && isYamlFile(vm["config"].as<std::string>())) {
    const std::filesystem::path config_file = inContext(vm, vm["config"].as<std::string>());
    if (!applyEngineConfig(config_file, engine_level, image_options)) return std::nullopt;
    vm.erase("config");
    engine_file = true;
  }
  return settings(vm, false);
}

// Each image a step names (in the workflow and its sub-workflows) is a plugin of the run,
// named as arcaflowImagePlugin() names it, added to `config`'s registry: the registry's
// entries of that name win (a newer version, another artifact). `images`: name@version ->
// src. False after printing why (two images that are one plugin).
bool addImagePlugins(const core::ArcaflowWorkflow& workflow, const std::filesystem::path& file,
                     core::Config& config, std::map<std::string, std::string>& images) {
  std::vector<const core::ArcaflowStep*> steps;  // the workflow's and its sub-workflows'
  std::function<void(const core::ArcaflowWorkflow&)> collect = [&](const core::ArcaflowWorkflow& wf) {
    for (const auto& s : wf.steps) {
      steps.push_back(&s);
      if (s.sub) collect(*s.sub);
    }
  };
  collect(workflow);
  for (const core::ArcaflowStep* step : steps) {
    const core::ArcaflowStep& s = *step;
    if (s.kind != core::ArcaflowStep::Kind::kPlugin || s.deployment_type != "image") continue;
    const core::ArcaflowPluginName plugin = core::arcaflowImagePlugin(s.src);
    const std::string id = plugin.name + "@" + plugin.version;
    if (auto [it, added] = images.emplace(id, s.src); !added) {
      if (it->second != s.src) {
        std::cerr << file.string() << ": step '" << s.id << "': image '" << s.src << "' and image '"
                  << it->second << "' are both plugin " << id
                  << "; give one a registry entry of its own\n";
        return false;
      }
      continue;
    }
    core::RegistryEntry entry;
    entry.name = plugin.name;
    entry.version = *core::Version::parse(plugin.version.empty() ? "0.0.0" : plugin.version);
    entry.artifacts["atp"] = core::Json{{"image", s.src}};
    config.extra_plugins.push_back(std::move(entry));
  }
  return true;
}

}  // namespace

std::filesystem::path arcaflowWorkflowFile(const po::variables_map& vm) {
  return inContext(vm, vm["workflow"].as<std::string>());
}

int validateArcaflow(const po::variables_map& given_vm) {
  po::variables_map vm = given_vm;
  const auto file = arcaflowWorkflowFile(vm);
  const core::ArcaflowLoad load = core::loadArcaflowWorkflow(file);
  for (const auto& p : load.problems) std::cerr << p.oneLine() << "\n";
  if (!load.ok()) return kArcaflowInvalid;
  std::optional<core::Json> input;  // with its defaults; none: $.input is not known
  if (vm.count("input")) {
    const auto input_file = inContext(vm, vm["input"].as<std::string>());
    auto read = core::readArcaflowInput(input_file);
    if (!read) {
      std::cerr << read.error().message() << "\n";
      return kArcaflowInvalid;
    }
    const auto bad = core::checkArcaflowInput(*load.workflow, *read);
    for (const auto& b : bad) std::cerr << input_file.string() << ": " << b << "\n";
    if (!bad.empty()) return kArcaflowInvalid;
    input = core::typedArcaflowInput(*load.workflow, std::move(*read));
  }
  // The steps' inputs against their plugins' schemas, as a TOML workflow's args are: read
  // from the atp deployer's schema cache, a plugin started only when its schema is not there.
  std::string engine_level;
  core::Json image_options = core::Json::object();
  bool engine_file = false;
  auto config = arcaflowSettings(vm, engine_level, image_options, engine_file);
  if (!config) return kArcaflowInvalid;
  std::map<std::string, std::string> images;
  if (!addImagePlugins(*load.workflow, file, *config, images)) return kArcaflowInvalid;
  const core::WorkflowModel model = core::arcaflowModel(*load.workflow);
  const std::filesystem::path context = vm.count("context")
                                            ? std::filesystem::path(vm["context"].as<std::string>())
                                            : std::filesystem::current_path();
  const auto known =
      core::arcaflowKnownInputs(*load.workflow, input ? &*input : nullptr, context);
  const auto cancel_target = handleSignals("the check");
  auto prepared = prepareModelRun(*config, model, core::Json::object(), cancel_target.get());
  if (!prepared) return kArcaflowInvalid;
  auto& runtime = prepared->runtime;
  core::CheckStarts starts{&cancel_target->checking, config->server.default_timeout,
                           &runtime->clock()};
  starts.unstarted_is_problem = true;
  const auto problems = core::checkModelArgs(model, known, "input", core::arcaflowUnknown,
                                             runtime->dispatcher(), starts);
  const bool cancelled = cancel_target->wasCancelled();
  cancel_target->release();
  if (cancelled) {
    std::cerr << "plugboard: " << file.string() << ": not checked: cancelled\n";
    return kArcaflowFailed;
  }
  for (const auto& p : problems) std::cerr << p.oneLine() << "\n";
  if (!problems.empty()) return kArcaflowInvalid;
  std::cout << file.string() << ": ok: Arcaflow workflow, " << load.workflow->steps.size()
            << " steps, outputs";
  for (const auto& [id, _] : load.workflow->outputs) std::cout << " " << id;
  std::cout << "; the steps' inputs fit their plugins' schemas"
            << (input ? "" : " (values from $.input not checked: no --input)") << "\n";
  return kArcaflowOk;
}

}  // namespace plugboard::cli

namespace plugboard::cli {

int runArcaflow(const po::variables_map& given_vm, bool json) {
  po::variables_map vm = given_vm;
  const auto file = arcaflowWorkflowFile(vm);
  const core::ArcaflowLoad load = core::loadArcaflowWorkflow(file);
  for (const auto& p : load.problems) std::cerr << p.oneLine() << "\n";
  if (!load.ok()) return kArcaflowInvalid;
  // The input, checked before anything starts (the engine's Execute: Unserialize).
  core::Json input = core::Json::object();
  if (vm.count("input")) {
    const auto input_file = inContext(vm, vm["input"].as<std::string>());
    auto read = core::readArcaflowInput(input_file);
    if (!read) {
      std::cerr << read.error().message() << "\n";
      return kArcaflowInvalid;
    }
    input = std::move(*read);
    const auto bad = core::checkArcaflowInput(*load.workflow, input);
    for (const auto& b : bad) std::cerr << input_file.string() << ": " << b << "\n";
    if (!bad.empty()) return kArcaflowInputRefused;
  } else if (const auto bad = core::checkArcaflowInput(*load.workflow, input); !bad.empty()) {
    for (const auto& b : bad) std::cerr << "input (none given, --input FILE): " << b << "\n";
    return kArcaflowInputRefused;
  }
  input = core::typedArcaflowInput(*load.workflow, std::move(input));
  // --config: the engine's config.yaml, or plugboard's own (TOML).
  std::string engine_level;
  core::Json image_options = core::Json::object();
  bool engine_file = false;
  auto config = arcaflowSettings(vm, engine_level, image_options, engine_file);
  if (!config) return kArcaflowInvalid;
  if (engine_file && !engine_level.empty() &&
      !(vm.count("log-level") && !vm["log-level"].defaulted()))
    configureLogging(engine_level, config->log_format);
  std::map<std::string, std::string> images;  // name@version -> src
  if (!addImagePlugins(*load.workflow, file, *config, images)) return kArcaflowInvalid;
  auto workflow = std::make_shared<const core::ArcaflowWorkflow>(*load.workflow);
  core::WorkflowModel model = core::arcaflowModel(*workflow);
  const std::filesystem::path context = vm.count("context")
                                            ? std::filesystem::path(vm["context"].as<std::string>())
                                            : std::filesystem::current_path();
  auto values = std::make_shared<const core::ArcaflowValues>(workflow, context);
  model.values = values;
  // The engine config's image deployer settings, on each image step's plugin.
  if (!image_options.empty()) {
    for (auto& t : model.templates) {
      if (t.kind == core::Template::Kind::kPlugin &&
          images.contains(t.plugin.key + "@" + t.plugin.version))
        t.plugin.deploy_options = image_options;
    }
  }

  const auto cancel_target = handleSignals("the run");
  // Every step's plugin found before anything runs (the engine loads every schema first).
  auto prepared = prepareModelRun(*config, model, core::Json::object(), cancel_target.get());
  if (!prepared) return kArcaflowInvalid;
  auto& runtime = prepared->runtime;
  core::EngineOptions options;
  options.parallel = std::max(1, vm.count("parallel") ? vm["parallel"].as<int>() : 1);
  options.default_timeout = config->server.default_timeout;
  options.poll_interval = config->server.poll_interval;
  options.args_limit = config->args_limit;
  // The steps' progress goes to stderr: stdout holds the output alone, as the engine's.
  NodeTreeDisplay display(model.name, input, isatty(STDERR_FILENO), stderr, json);
  core::DispatchedLeafCalls calls(runtime->dispatcher());
  core::Engine engine(calls, options, &display);
  cancel_target->setEngine(engine);
  const core::RunResult result = engine.run(model, input);
  cancel_target->release();
  display.close(result);
  auto output = values->output(result);
  int status = kArcaflowOk;
  std::string failure;
  if (!output) {
    failure = output.error().message();
  } else if (!*output) {
    // workflow.go: every output node unresolvable (ErrNoMorePossibleOutputs).
    failure = "no workflow output could be produced";
    for (const auto& n : result.nodes) {
      if (&n == &result.nodes.front() || n.message.empty()) continue;
      failure += "; step '" + n.display_name + "' " + std::string(core::nodePhaseName(n.phase)) +
                 ": " + n.message;
    }
  }
  if (result.cancelled) failure = "the workflow was cancelled";
  if (!failure.empty())
    status = kArcaflowFailed;
  else if ((*output)->error)
    status = kArcaflowErrorOutput;
  if (json) {
    core::Json out = {{"status", result.statusJson()}};
    if (failure.empty()) {
      out["output_id"] = (*output)->id;
      out["output_data"] = (*output)->data;
    } else {
      out["error"] = failure;
    }
    std::fputs(out.dump(2).c_str(), stdout);
    std::fputc('\n', stdout);
  } else if (failure.empty()) {
    std::fputs(core::arcaflowOutputYaml((*output)->id, (*output)->data).c_str(), stdout);
  }
  if (!failure.empty())
    std::cerr << "plugboard: " << file.string() << ": workflow failed: " << failure << "\n";
  return endRun(*runtime, status, result.abandoned);
}

}  // namespace plugboard::cli

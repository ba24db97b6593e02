#include "tools/plugboard/arcaflow_cli.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

// The directory relative files of the workflow are read from: --context, else the
// working directory.
std::filesystem::path contextDir(const po::variables_map& vm) {
  return vm.count("context") ? std::filesystem::path(vm["context"].as<std::string>())
                             : std::filesystem::current_path();
}

// --read-outside-context: readFile() may read any file, not only those in the context.
bool readOutsideContext(const po::variables_map& vm) {
  return vm.count("read-outside-context") > 0 && vm["read-outside-context"].as<bool>();
}

// The engine's deployers, as its deployer registry knows them: a deployer configuration
// (the config file's `deployers.KIND`, a step's `deploy`) is the registry's
// DeployConfigSchema of the deployment type, a one_of on `deployer_name` of that type's
// deployers, each an object whose unknown keys its schema refuses (the deployers'
// schema.go: arcaflow-engine-deployer-podman, -docker, -kubernetes, -python). Each
// object checked here by its dotted path ("" the top); what lies deeper is not checked.
struct EngineDeployer {
  const char* name;
  const char* kind;  // the deployment type: image or python
  std::vector<std::pair<std::string, std::vector<std::string>>> objects;
};

const std::vector<EngineDeployer>& engineDeployers() {
  static const std::vector<std::string> kContainer = {"Hostname", "Domainname", "User", "Env",
                                                      "NetworkDisabled", "MacAddress"};
  static const std::vector<std::string> kHost = {
      "NetworkMode", "PortBindings", "CapAdd",    "CapDrop",    "CgroupnsMode",
      "Dns",         "DnsOptions",   "DnsSearch", "ExtraHosts", "Privileged"};
  static const std::vector<EngineDeployer> kDeployers = [] {
    std::vector<std::string> podman_host = kHost;
    podman_host.insert(podman_host.begin(), "Binds");
    return std::vector<EngineDeployer>{
        {"podman",
         "image",
         {{"", {"deployment", "podman"}},
          {"deployment", {"container", "host", "imagePullPolicy", "imagePlatform"}},
          {"deployment.container", kContainer},
          {"deployment.host", podman_host},
          {"podman", {"path", "containerNamePrefix", "rngSeed", "connectionName"}}}},
        {"docker",
         "image",
         {{"", {"connection", "deployment", "timeouts"}},
          {"connection", {"host", "cacert", "cert", "key"}},
          {"deployment",
           {"container", "host", "network", "platform", "imagePullPolicy", "startDelayMS"}},
          {"deployment.container", kContainer},
          {"deployment.host", kHost},
          {"timeouts", {"http"}}}},
        {"kubernetes", "image", {{"", {"connection", "pod", "timeouts"}}}},
        {"python", "python", {{"", {"pythonPath", "workdir", "pythonSemver", "modulePullPolicy"}}}},
    };
  }();
  return kDeployers;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// An engine deployer configuration `config` of deployment type `kind` as the atp
// deployer's options: the one place they are mapped, for the config file and for a step.
// deployment.host.NetworkMode (podman's and docker's HostConfig, as podman's --network:
// "host" shares the host's network namespace) is `network`; python's pythonPath is the
// interpreter, `python`. docker and kubernetes run with podman here (a line says so);
// the other keys of a deployer's schema are accepted and not used (a line names them).
// Messages: `where(path)` is where the key at dotted `path` is written ("" the config
// itself), `subject` what holds it ("" or "step 'a': "), `root` its name ("deploy",
// "deployers.image"). Nullopt after printing why.
std::optional<core::Json> atpOptionsOf(const core::Json& config, const std::string& kind,
                                       const std::string& subject, const std::string& root,
                                       const std::function<std::string(const std::string&)>& where) {
  std::vector<std::string> names;
  for (const auto& d : engineDeployers())
    if (kind == d.kind) names.push_back(d.name);
  const auto fail = [&](const std::string& path, const std::string& message) {
    std::cerr << where(path) << ": " << subject << root << (path.empty() ? "" : "." + path)
              << " " << message << "\n";
    return std::nullopt;
  };
  const auto written = [](const core::Json& v) { return core::arcaflowTag(v).empty(); };
  if (!config.is_object() || !written(config))
    return fail("", "must be a mapping with deployer_name (" + joined(names) +
                        "), written out: plugboard reads it before the run");
  const auto name_it = config.find("deployer_name");
  if (name_it == config.end()) return fail("", "has no deployer_name (" + joined(names) + ")");
  if (!name_it->is_string() || !written(*name_it))
    return fail("deployer_name", "must be one of " + joined(names));
  const std::string name = name_it->get<std::string>();
  const EngineDeployer* deployer = nullptr;
  for (const auto& d : engineDeployers())
    if (kind == d.kind && name == d.name) deployer = &d;
  if (deployer == nullptr)
    return fail("deployer_name", "'" + name + "' is not a deployer of " + kind +
                                     " plugins (" + joined(names) + ")");
  if (name == "docker" || name == "kubernetes") {
    std::cerr << "plugboard: " << where("deployer_name") << ": " << subject << root
              << ": deployer_name '" << name << "' runs with podman here (plugboard's atp deployer)\n";
  }
  // What maps onto the atp deployer's options, by dotted path.
  const std::map<std::string, std::string> mapped =
      kind == "python" ? std::map<std::string, std::string>{{"pythonPath", "python"}}
      : name == "kubernetes"
          ? std::map<std::string, std::string>{}
          : std::map<std::string, std::string>{{"deployment.host.NetworkMode", "network"}};
  core::Json options = core::Json::object();
  std::vector<std::string> unused;
  std::function<bool(const core::Json&, const std::string&)> walk =
      [&](const core::Json& object, const std::string& at) -> bool {
    const std::vector<std::string>* keys = nullptr;
    for (const auto& [path, allowed] : deployer->objects)
      if (path == at) keys = &allowed;
    for (const auto& [key, value] : object.items()) {
      if (at.empty() && key == "deployer_name") continue;
      const std::string path = at.empty() ? key : at + "." + key;
      if (std::find(keys->begin(), keys->end(), key) == keys->end()) {
        fail(path, "is not a key of the " + name + " deployer's configuration" +
                       (at.empty() ? "" : " at " + at) + " (" + joined(*keys) + ")");
        return false;
      }
      if (auto m = mapped.find(path); m != mapped.end()) {
        if (!value.is_string() || value.get<std::string>().empty() || !written(value)) {
          fail(path, "must be a string");
          return false;
        }
        options[m->second] = value.get<std::string>();
        continue;
      }
      const bool checked = std::any_of(deployer->objects.begin(), deployer->objects.end(),
                                       [&](const auto& o) { return o.first == path; });
      if (checked && value.is_object() && written(value)) {
        if (!walk(value, path)) return false;
      } else {
        unused.push_back(path);
      }
    }
    return true;
  };
  if (!walk(config, "")) return std::nullopt;
  if (!unused.empty()) {
    std::cerr << "plugboard: " << where("") << ": " << subject << root
              << ": not used here (plugboard's atp deployer): " << joined(unused) << "\n";
  }
  return options;
}

// The engine's config file's deployers as the atp deployer's options, by deployment type.
struct EngineDeployOptions {
  core::Json image = core::Json::object();
  core::Json python = core::Json::object();
};

// The engine's config file (config/config.go: log, deployers, plugins, logged_outputs)
// applied to plugboard's config: log.level; `deployers` as atpOptionsOf() maps them.
// False after printing why.
bool applyEngineConfig(const std::filesystem::path& file, std::string& level,
                       EngineDeployOptions& deploy) {
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
        if (kind != "image" && kind != "python") {
          std::cerr << file.string() << ": deployers." << kind
                    << " is not a deployment type (image, python)\n";
          return false;
        }
        auto options = atpOptionsOf(deployer, kind, "", "deployers." + kind,
                                    [&](const std::string&) { return file.string(); });
        if (!options) return false;
        (kind == "image" ? deploy.image : deploy.python) = std::move(*options);
      }
    } else if (key != "plugins" && key != "logged_outputs") {
      std::cerr << file.string() << ": unknown key '" << key
                << "' (the engine's config has log, deployers, plugins, logged_outputs)\n";
      return false;
    }
  }
  return true;
}

// The engine's default closure wait (internal/step/plugin/provider.go
// defaultClosureTimeout), which is the atp deployer's default cancel_grace.
constexpr long long kDefaultClosureWaitMs = 5000;

// The atp deployer's options of each plugin step's template, by template name as
// arcaflowModel() names them ("STEP", "FOREACH/STEP"): the step's own `deploy`, else the
// config file's for its deployment type (provider.go provideDeployInput: a step's deploy
// replaces the local deployer's configuration, for that step only), with its
// closure_wait_timeout (provider.go closureTimeoutSchema: milliseconds, at least 0) as
// `cancel_grace` when it is not the default. Steps whose options differ run in processes
// of their own (the launcher keeps one per plugin and options). Options from the config
// file are the operator's; a step's own are the workflow's, which may set only what the
// deployer allows a step. Nullopt after printing why.
struct StepOptions {
  core::Json options;
  bool configured = false;  // all from the config file
};
std::optional<std::map<std::string, StepOptions>> stepDeployOptions(
    const core::ArcaflowWorkflow& workflow, const EngineDeployOptions& config) {
  std::map<std::string, StepOptions> out;
  std::function<bool(const core::ArcaflowWorkflow&, const std::string&)> collect =
      [&](const core::ArcaflowWorkflow& wf, const std::string& prefix) -> bool {
    for (const auto& s : wf.steps) {
      if (s.kind == core::ArcaflowStep::Kind::kForeach) {
        if (s.sub && !collect(*s.sub, prefix + s.id + "/")) return false;
        continue;
      }
      const auto where = [&](const std::string& path) {
        auto it = s.at.find(path.empty() ? "deploy" : "deploy." + path);
        if (it == s.at.end()) it = s.at.find("deploy");
        return (it != s.at.end() ? it->second : s.where).text();
      };
      const std::string subject = "step '" + s.id + "': ";
      core::Json options = s.deployment_type == "python" ? config.python : config.image;
      bool configured = true;
      if (!s.deploy.is_null()) {
        configured = false;
        auto own = atpOptionsOf(s.deploy, s.deployment_type, subject, "deploy", where);
        if (!own) return false;
        options = std::move(*own);
      }
      if (!s.closure_wait_timeout.is_null()) {
        const core::Json& v = s.closure_wait_timeout;
        std::optional<long long> ms;
        if (v.is_number_integer()) {
          ms = v.get<long long>();
        } else if (v.is_string()) {
          const std::string& text = v.get_ref<const std::string&>();
          long long n = 0;
          auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
          if (ec == std::errc() && end == text.data() + text.size() && !text.empty()) ms = n;
        }
        if (!ms || *ms < 0) {
          const auto at = s.at.find("closure_wait_timeout");
          std::cerr << (at != s.at.end() ? at->second : s.where).text() << ": step '" << s.id
                    << "': closure_wait_timeout must be an integer of milliseconds, at least 0"
                    << (core::arcaflowTag(v).empty()
                            ? ""
                            : ", written out: plugboard reads it before the run")
                    << "\n";
          return false;
        }
        if (*ms != kDefaultClosureWaitMs) options["cancel_grace"] = std::to_string(*ms) + "ms";
      }
      if (!options.empty()) out[prefix + s.id] = StepOptions{std::move(options), configured};
    }
    return true;
  };
  if (!collect(workflow, "")) return std::nullopt;
  return out;
}

// Each step's options (stepDeployOptions()) on its template of `model`.
void applyStepOptions(core::WorkflowModel& model,
                      const std::map<std::string, StepOptions>& options) {
  for (auto& t : model.templates) {
    if (t.kind != core::Template::Kind::kPlugin) continue;
    if (auto it = options.find(t.name); it != options.end()) {
      t.plugin.deploy_options = it->second.options;
      t.plugin.deploy_options_configured = it->second.configured;
    }
  }
}

bool isYamlFile(const std::filesystem::path& file) {
  const std::string ext = file.extension().string();
  return ext == ".yaml" || ext == ".yml";
}

// plugboard's configuration for an Arcaflow workflow: --config names the engine's
// config.yaml (applied by applyEngineConfig(), then taken off `vm`) or plugboard's own
// TOML. Nullopt after printing why.
std::optional<core::Config> arcaflowSettings(po::variables_map& vm, std::string& engine_level,
                                             EngineDeployOptions& deploy, bool& engine_file) {
  if (vm.count("config") && isYamlFile(vm["config"].as<std::string>())) {
    const std::filesystem::path config_file = inContext(vm, vm["config"].as<std::string>());
    if (!applyEngineConfig(config_file, engine_level, deploy)) return std::nullopt;
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

// What `validate` and `run` make of a workflow before anything starts: plugboard's
// configuration (arcaflowSettings()), each image step's plugin in its registry
// (addImagePlugins()), and the model with each step's deploy options and closure wait on
// its template (stepDeployOptions()). Nullopt after printing why.
struct ArcaflowPlan {
  core::Config config;
  std::string engine_level;  // the engine config's log.level, if one was given
  bool engine_file = false;  // --config named the engine's config.yaml
  core::WorkflowModel model;
};
std::optional<ArcaflowPlan> planArcaflow(po::variables_map& vm,
                                         const core::ArcaflowWorkflow& workflow,
                                         const std::filesystem::path& file) {
  ArcaflowPlan plan;
  EngineDeployOptions deploy;
  auto config = arcaflowSettings(vm, plan.engine_level, deploy, plan.engine_file);
  if (!config) return std::nullopt;
  const auto step_options = stepDeployOptions(workflow, deploy);
  if (!step_options) return std::nullopt;
  std::map<std::string, std::string> images;  // name@version -> src
  if (!addImagePlugins(workflow, file, *config, images)) return std::nullopt;
  plan.config = std::move(*config);
  plan.model = core::arcaflowModel(workflow);
  applyStepOptions(plan.model, *step_options);
  return plan;
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
  auto plan = planArcaflow(vm, *load.workflow, file);
  if (!plan) return kArcaflowInvalid;
  const core::Config* config = &plan->config;
  const core::WorkflowModel& model = plan->model;
  const auto known = core::arcaflowKnownInputs(*load.workflow, input ? &*input : nullptr,
                                               contextDir(vm), readOutsideContext(vm));
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
  auto plan = planArcaflow(vm, *load.workflow, file);
  if (!plan) return kArcaflowInvalid;
  const core::Config* config = &plan->config;
  if (plan->engine_file && !plan->engine_level.empty() &&
      !(vm.count("log-level") && !vm["log-level"].defaulted()))
    configureLogging(plan->engine_level, config->log_format);
  core::WorkflowModel& model = plan->model;
  auto workflow = std::make_shared<const core::ArcaflowWorkflow>(*load.workflow);
  auto values = std::make_shared<const core::ArcaflowValues>(workflow, contextDir(vm),
                                                             readOutsideContext(vm));
  model.values = values;

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
  options.max_nodes = config->max_nodes;
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

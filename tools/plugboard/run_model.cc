#include "tools/plugboard/run_model.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include <plugboard/host/owner.h>

#include "tools/plugboard/cli.h"
#include "tools/plugboard/commands.h"
#include "tools/plugboard/node_tree.h"
#include "tools/plugboard/signals.h"

namespace plugboard::cli {
namespace po = boost::program_options;

namespace {

// A private directory for what the run writes (a workflow's own executor plugins), removed
// at the end; those of runs that were killed are removed first (plugboard/host/owner.h).
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    const std::filesystem::path parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    host::removeDeadDirectories(parent, "plugboard-run-");
    if (auto made = host::makeOwnedDirectory(parent, "plugboard-run-")) path_ = *made;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string optionText(const po::variables_map& vm, const char* name) {
  return vm.count(name) ? vm[name].as<std::string>() : std::string();
}

// The model, its parameters as given, and the config with the run's executor plugins;
// nullopt after printing why.
struct Loaded {
  core::WorkflowModel model;
  core::Json given;
};

std::optional<Loaded> load(const po::variables_map& vm, core::Config& config,
                           const std::filesystem::path& scratch) {
  const std::string file = vm["workflow"].as<std::string>();
  auto model =
      core::readModel(file, core::ModelSource{optionText(vm, "entrypoint"),
                                              optionText(vm, "templates"), config.containment});
  if (!model) {
    std::cerr << model.error().message() << "\n";
    return std::nullopt;
  }
  core::Json given = core::Json::object();
  if (vm.count("parameter-file")) {
    auto from_file = core::readParameterFile(vm["parameter-file"].as<std::string>());
    if (!from_file) {
      std::cerr << "plugboard: " << from_file.error().message() << "\n";
      return std::nullopt;
    }
    given = std::move(*from_file);
  }
  auto flags = params(vm);
  if (!flags) return std::nullopt;
  for (const auto& [name, value] : *flags) given[name] = value;
  auto plugins = core::executorPlugins(*model, optionText(vm, "executor-plugins"), scratch);
  if (!plugins) {
    std::cerr << "plugboard: " << plugins.error().message() << "\n";
    return std::nullopt;
  }
  for (auto& p : *plugins) config.extra_plugins.push_back(std::move(p));
  return Loaded{std::move(*model), std::move(given)};
}

// What `argo get -o json` prints of a workflow: its kind, metadata and status, written as
// dump(2) would write it, the status's nodes one at a time.
void writeWorkflowJson(std::FILE* out, const core::WorkflowModel& model,
                       const core::RunResult& result) {
  core::Json metadata = {{"name", result.workflow}, {"uid", result.uid}};
  if (!model.labels.empty()) metadata["labels"] = model.labels;
  std::string text = "{\n  \"apiVersion\": \"argoproj.io/v1alpha1\",\n  \"kind\": \"Workflow\",\n"
                     "  \"metadata\": ";
  for (char c : metadata.dump(2)) text += c == '\n' ? std::string("\n  ") : std::string(1, c);
  text += ",\n  \"status\": ";
  std::fputs(text.c_str(), out);
  result.writeStatusJson(out, 1);
  std::fputs("\n}", out);
}

}  // namespace

void addModelOptions(po::options_description& options) {
  options.add_options()("entrypoint", po::value<std::string>()->value_name("TEMPLATE"),
                        "the template to start from (a WorkflowTemplate's, or instead of the "
                        "file's spec.entrypoint)")(
      "templates", po::value<std::string>()->value_name("DIR"),
      "directory of WorkflowTemplates that templateRef names")(
      "parameter-file", po::value<std::string>()->value_name("FILE"),
      "workflow parameters from a YAML or JSON file (--param wins)")(
      "executor-plugins", po::value<std::string>()->value_name("DIR"),
      "directory of Argo executor plugins (plugin.yaml or the ConfigMaps `argo executor-plugin "
      "build` writes); a workflow's own spec.executorPlugins replace them")(
      "input", po::value<std::string>()->value_name("FILE"),
      "an Arcaflow workflow's input (YAML or JSON), taken from --context when relative")(
      "context", po::value<std::string>()->value_name("DIR"),
      "an Arcaflow workflow's context directory: the workflow and input files are taken "
      "from it when relative, and readFile() reads only files in it")(
      "read-outside-context", po::bool_switch(),
      "let an Arcaflow workflow's readFile() read any file, not only those in --context");
}

std::optional<PreparedModel> prepareModelRun(const core::Config& config,
                                             const core::WorkflowModel& model,
                                             const core::Json& given, CancelTarget* cancel) {
  auto runtime = openRuntime(config);
  if (!runtime) return std::nullopt;
  if (cancel != nullptr) cancel->setDeployers(runtime->launcher().deployers());
  auto parameters = runtime->prepareModel(model, given);
  if (!parameters) {
    if (cancel != nullptr) cancel->release();
    std::cerr << parameters.error().message() << "\n";
    return std::nullopt;
  }
  return PreparedModel{std::move(runtime), std::move(*parameters)};
}

int runModel(const po::variables_map& vm, core::Config config, const core::EngineOptions& options,
             bool json) {
  ScratchDir scratch;
  auto loaded = load(vm, config, scratch.path());
  if (!loaded) return kExitUsage;
  const auto cancel_target = handleSignals("the run");
  auto prepared = prepareModelRun(config, loaded->model, loaded->given, cancel_target.get());
  if (!prepared) return kExitUsage;
  auto& runtime = prepared->runtime;
  const core::Json* parameters = &prepared->parameters;
  // JSON keeps standard output for the workflow; the live tree goes to a terminal's
  // standard error then.
  const bool tree_on_stderr = json && isatty(STDERR_FILENO);
  NodeTreeDisplay display(loaded->model.name, *parameters,
                          isatty(tree_on_stderr ? STDERR_FILENO : STDOUT_FILENO) != 0,
                          tree_on_stderr ? stderr : stdout, json && !tree_on_stderr);
  core::DispatchedLeafCalls calls(runtime->dispatcher());
  core::Engine engine(calls, options, &display);
  cancel_target->setEngine(engine);
  const core::RunResult result = engine.run(loaded->model, *parameters);
  cancel_target->release();
  if (json) {
    writeWorkflowJson(stdout, loaded->model, result);
    std::fputc('\n', stdout);
  }
  display.close(result);
  const int status = result.cancelled                                  ? kExitCancelled
                     : result.phase == core::NodePhase::kSucceeded ? kExitOk
                                                                       : kExitFailed;
  return endRun(*runtime, status, result.abandoned);
}

int validateModel(const po::variables_map& vm, core::Config config) {
  ScratchDir scratch;
  auto loaded = load(vm, config, scratch.path());
  if (!loaded) return kExitUsage;
  if (!prepareModelRun(config, loaded->model, loaded->given, nullptr)) return kExitUsage;
  std::cout << vm["workflow"].as<std::string>() << ": ok: workflow '" << loaded->model.name
            << "', " << loaded->model.templates.size() << " templates, entrypoint '"
            << loaded->model.entrypoint << "'\n";
  return kExitOk;
}

}  // namespace plugboard::cli

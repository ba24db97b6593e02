// plugboard run WORKFLOW: runs a workflow file's steps on the installed plugins.
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <regex>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/runtime/exports.h"
#include "tools/plugboard/arcaflow_cli.h"
#include "tools/plugboard/cli.h"
#include "tools/plugboard/commands.h"
#include "tools/plugboard/progress.h"
#include "tools/plugboard/run_model.h"
#include "tools/plugboard/signals.h"

namespace plugboard::cli {
namespace po = boost::program_options;

namespace {

std::string plural(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// A step's log lines, indented under a heading that names the step.
void printLogs(const core::StepStatus& s) {
  std::printf("logs of step '%s'", s.id.c_str());
  if (!s.plugin.empty()) {
    std::printf(" (%s%s%s)", s.plugin.c_str(), s.deployer.empty() ? "" : " via ",
                s.deployer.c_str());
  }
  if (s.logs.dropped() > 0) {
    std::printf(", the last %zu of %zu lines", s.logs.total() - s.logs.dropped(), s.logs.total());
  }
  std::printf(":\n");
  if (s.logs.empty()) std::printf("  (none)\n");
  for (const auto& line : s.logs.lines()) {
    std::printf("  %-5s %s\n", std::string(core::logLevelName(line.level)).c_str(),
                line.text.c_str());
  }
}

// After the run: the lines each failed step logged (or those of --logs STEP), the
// cancelled steps, the outcome and the workflow's outputs.
void printSummary(const core::RunReport& report, const std::string& logs_of) {
  int ok = 0;
  for (const auto& s : report.steps) ok += s.phase == core::StepPhase::kSucceeded;
  int skipped = 0;
  for (const auto& s : report.steps) skipped += s.phase == core::StepPhase::kSkipped;
  for (const auto& s : report.steps) {
    const bool failed = s.phase == core::StepPhase::kFailed || s.phase == core::StepPhase::kError;
    if (logs_of.empty() ? failed && !s.logs.empty() : s.id == logs_of) printLogs(s);
  }
  for (const auto& s : report.steps) {
    if (s.phase == core::StepPhase::kCancelled) {
      std::printf("cancelled: step '%s' (%s)\n", s.id.c_str(), s.message.c_str());
    }
  }
  const std::string took = core::formatElapsed(report.duration);
  if (report.succeeded()) {
    if (skipped > 0) {
      std::printf("workflow '%s' Succeeded in %s (%s, %d skipped)\n", report.workflow.c_str(),
                  took.c_str(), plural(ok, "step", "steps").c_str(), skipped);
    } else {
      std::printf("workflow '%s' Succeeded in %s (%s)\n", report.workflow.c_str(), took.c_str(),
                  plural(ok, "step", "steps").c_str());
    }
  } else {
    std::printf("workflow '%s' %s after %s: %d of %s succeeded\n", report.workflow.c_str(),
                report.cancelled ? "Cancelled" : "Failed", took.c_str(), ok,
                plural(static_cast<int>(report.steps.size()), "step", "steps").c_str());
  }
  if (!report.outputs.empty()) {
    for (const auto& [name, value] : report.outputs.items()) {
      std::printf("output %s = %s\n", name.c_str(),
                  value.is_string() ? value.get<std::string>().c_str() : value.dump().c_str());
    }
  }
}

}  // namespace

CommandOptions runOptions() {
  CommandOptions command{po::options_description("run options")};
  auto& options = command.options;
  addPluginDirsOption(options);
  addParamOption(options);
  addPriorityOption(options);
  addModelOptions(options);
  options.add_options()(
      "workflow", po::value<std::string>()->required(),
      "workflow file: TOML, an Argo Workflow / WorkflowTemplate (YAML), or an Arcaflow "
      "workflow.yaml")("output,o",
                       po::value<std::string>()->default_value("text")->value_name("text|json"),
                       "text or json")(
      "logs", po::value<std::string>()->value_name("STEP"),
      "after the run, show what step STEP's plugin logged (failed steps' lines are shown "
      "anyway; --output json has every step's)")(
      "parallel",
      // The default is shown as words: the build machine's core count would otherwise be
      // written into the man pages made from this table.
      po::value<int>()->default_value(static_cast<int>(std::thread::hardware_concurrency()),
                                      "number of cores"),
      "plugin calls running at once")(
      "default-timeout", po::value<std::string>(),
      configHelp("deadline of a TOML or Arcaflow step attempt without its own timeout (an "
                 "Argo step has none, as in Argo)",
                 "default_timeout", defaultText(core::defaults::kTimeout))
          .c_str())("poll-interval", po::value<std::string>(),
                    configHelp("delay before calling a Running step again when it asks for none",
                               "poll_interval", defaultText(core::defaults::kPollInterval))
                        .c_str());
  command.positional.add("workflow", 1);
  return command;
}

int cmdRun(const Args& args) {
  po::variables_map vm;
  int exit_code = kExitOk;
  if (!parseCommandArgs(args, "run", vm, exit_code)) return exit_code;
  const auto output = choice(vm, "output", {"text", "json"});
  if (!output) return kExitUsage;
  if (const auto file = arcaflowWorkflowFile(vm); core::isArcaflowWorkflow(file))
    return runArcaflow(vm, *output == "json");
  auto config = settings(vm, core::isTomlWorkflow(vm["workflow"].as<std::string>()));
  auto given = config ? params(vm) : std::nullopt;
  if (!config || !given) return kExitUsage;
  core::EngineOptions engine_options;
  engine_options.parallel = std::max(1, vm["parallel"].as<int>());
  engine_options.default_timeout = config->server.default_timeout;
  engine_options.poll_interval = config->server.poll_interval;
  engine_options.args_limit = config->args_limit;
  engine_options.max_nodes = config->max_nodes;
  // Argo's controller reads TRANSIENT_ERROR_PATTERN for retryPolicy OnTransientError.
  if (const char* pattern = std::getenv("TRANSIENT_ERROR_PATTERN"); pattern && *pattern) {
    try {
      engine_options.transient_error_pattern.emplace(pattern);
    } catch (const std::regex_error& e) {
      std::cerr << "plugboard: TRANSIENT_ERROR_PATTERN '" << pattern
                << "' is not a regular expression: " << e.what() << "\n";
      return kExitUsage;
    }
  }
  if (!core::isTomlWorkflow(vm["workflow"].as<std::string>())) {
    if (vm.count("logs")) {
      std::cerr << "plugboard: --logs names a step of a TOML workflow; "
                << vm["workflow"].as<std::string>() << " is not one\n";
      return kExitUsage;
    }
    // Argo gives a step no deadline of its own (its templates' timeout and
    // activeDeadlineSeconds are unset unless written): an Argo workflow's steps get none.
    engine_options.default_timeout.reset();
    return runModel(vm, std::move(*config), engine_options, *output == "json");
  }

  // Ctrl-C and SIGTERM apply from here: the check may start plugins to read their schemas.
  const auto cancel_target = handleSignals("the run");
  auto runtime = openRuntime(*config);
  if (!runtime) return kExitUsage;
  cancel_target->setDeployers(runtime->launcher().deployers());
  // Each start the check makes waits at most its step's deadline; then the step tries.
  const core::CheckStarts check_starts{&cancel_target->checking, engine_options.default_timeout};
  auto prepared = runtime->prepare(vm["workflow"].as<std::string>(), *given, check_starts);
  if (!prepared) {
    cancel_target->release();
    std::cerr << prepared.error().message() << "\n";
    return kExitUsage;
  }
  if (core::Status ready = runtime->deployersReady(prepared->workflow); !ready) {
    cancel_target->release();
    std::cerr << ready.error().message() << "\n";
    return kExitUsage;
  }
  // The run needs only the model: the parsed file goes now, before the run's nodes grow.
  prepared->workflow = core::Workflow{};
  // A file read whole (one the reading a step at a time could not take) freed the tree
  // of all its TOML; give those pages back, so that its peak memory is that of the parse
  // or of the run, not of both (the calls allocate on the workers, whose malloc arenas
  // would not reuse them). Read a step at a time, there is little to give back.
  malloc_trim(0);
  // Every thread keeps its malloc arena: one arena for the whole process (once used from
  // 10,000 steps on) made the engine and the workers wait on its lock for no memory saved
  // (docs/performance.md, "Per-step cost, eighth pass").
  std::vector<std::string> ids;  // the steps' ids in file order
  for (const core::TemplateCall* s : core::tomlSteps(prepared->model)) ids.push_back(s->name);

  const bool json = *output == "json";
  // JSON keeps standard output for the report; the live lines go to a terminal's standard
  // error then (and nothing when it is not one).
  const bool shown = !json || isatty(STDERR_FILENO);
  const std::string logs_of = vm.count("logs") ? vm["logs"].as<std::string>() : "";
  if (!logs_of.empty() && std::find(ids.begin(), ids.end(), logs_of) == ids.end()) {
    cancel_target->release();
    std::cerr << "plugboard: --logs: workflow '" << prepared->model.name << "' has no step '"
              << logs_of << "'" << core::didYouMean(logs_of, ids) << "\n";
    return kExitUsage;
  }
  if (!shown) ids.clear();
  ProgressDisplay display(ids, json ? shown : isatty(STDOUT_FILENO) != 0, json ? stderr : stdout);
  // The display keeps what it needs of them; their memory goes (`ids = {}` would keep it).
  std::vector<std::string>().swap(ids);
  // The TOML workflow runs on the engine as the model its front end made; the steps are
  // told from the engine's nodes.
  core::DispatchedLeafCalls calls(runtime->dispatcher());
  core::StepReporter steps(prepared->model, shown ? &display : nullptr);
  core::Engine engine(calls, engine_options, &steps);
  cancel_target->setEngine(engine);
  // A signal that came while the workflow was checked: nothing runs, every step is
  // skipped.
  core::RunResult result;
  if (cancel_target->wasCancelled()) {
    result.workflow = prepared->model.name;
    result.phase = core::NodePhase::kFailed;
    result.cancelled = true;
  } else {
    result = engine.run(prepared->model, prepared->inputs);
  }
  // The run's own state is freed now; give its pages back before the report is made
  // beside the nodes, so that the report's arrays take their place rather than adding to
  // the peak.
  malloc_trim(0);
  core::RunReport report;
  if (json && !shown) {
    // Nothing else is shown: each step's status is made as it is written, so that the
    // report never holds a status per step beside the nodes.
    cancel_target->release();
    report = steps.writeJson(std::move(result), stdout);
    std::fputc('\n', stdout);
    display.close();
  } else {
    report = steps.report(std::move(result));
    cancel_target->release();
    display.close();
    if (json) {
      report.writeJson(stdout);
      std::fputc('\n', stdout);
    } else {
      printSummary(report, logs_of);
    }
  }
  const int status = report.cancelled ? kExitCancelled : report.succeeded() ? kExitOk : kExitFailed;
  return endRun(*runtime, status, report.abandoned);
}

}  // namespace plugboard::cli

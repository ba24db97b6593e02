// plugboard run WORKFLOW: runs a workflow file's steps on the installed plugins.
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

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

constexpr std::size_t kOneArenaSteps = 10'000;

void printSummary(const core::RunReport& report) {
  int ok = 0;
  for (const auto& s : report.steps) ok += s.phase == core::StepPhase::kSucceeded;
  int skipped = 0;
  for (const auto& s : report.steps) skipped += s.phase == core::StepPhase::kSkipped;
  for (const auto& s : report.steps) {
    if (s.phase == core::StepPhase::kCancelled) {
      std::printf("cancelled: step '%s' (%s)\n", s.id.c_str(), s.message.c_str());
    }
  }
  const std::string took = core::formatElapsed(report.duration);
  if (report.succeeded()) {
    if (skipped > 0) {
      std::printf("workflow '%s' Succeeded in %s (%d steps, %d skipped)\n",
                  report.workflow.c_str(), took.c_str(), ok, skipped);
    } else {
      std::printf("workflow '%s' Succeeded in %s (%d steps)\n", report.workflow.c_str(),
                  took.c_str(), ok);
    }
  } else {
    std::printf("workflow '%s' %s after %s: %d of %zu steps succeeded\n", report.workflow.c_str(),
                report.cancelled ? "Cancelled" : "Failed", took.c_str(), ok, report.steps.size());
  }
  if (!report.outputs.empty()) {
    for (const auto& [name, value] : report.outputs.items()) {
      std::printf("output %s = %s\n", name.c_str(),
                  value.is_string() ? value.get<std::string>().c_str() : value.dump().c_str());
    }
  }
  if (report.abandoned > 0) {
    std::printf("warning: %d plugin call(s) ignored cancellation and were abandoned\n",
                report.abandoned);
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
  options.add_options()("workflow", po::value<std::string>()->required(),
                        "workflow file: TOML, or an Argo Workflow / WorkflowTemplate (YAML)")(
      "output,o", po::value<std::string>()->default_value("text")->value_name("text|json"),
      "text or json")(
      "parallel",
      // The default is shown as words: the build machine's core count would otherwise be
      // written into the man pages made from this table.
      po::value<int>()->default_value(static_cast<int>(std::thread::hardware_concurrency()),
                                      "number of cores"),
      "plugin calls running at once")(
      "default-timeout", po::value<std::string>(),
      configHelp("deadline of a step attempt without its own timeout", "default_timeout",
                 defaultText(core::defaults::kTimeout))
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
  if (const auto file = arcaflowWorkflowFile(vm); core::isArcaflowWorkflow(file))
    return refuseArcaflowRun(file);
  const auto output = choice(vm, "output", {"text", "json"});
  if (!output) return kExitUsage;
  auto config = settings(vm, core::isTomlWorkflow(vm["workflow"].as<std::string>()));
  auto given = config ? params(vm) : std::nullopt;
  if (!config || !given) return kExitUsage;
  core::EngineOptions engine_options;
  engine_options.parallel = std::max(1, vm["parallel"].as<int>());
  engine_options.default_timeout = config->server.default_timeout;
  engine_options.poll_interval = config->server.poll_interval;
  engine_options.args_limit = config->args_limit;
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
  // Parsing freed the file's TOML tree step by step; give those pages back, so that a
  // large workflow's peak memory is that of the parse or of the run, not of both (the
  // calls allocate on the workers, whose malloc arenas would not reuse them).
  malloc_trim(0);
  // A large workflow: one malloc arena for the whole process, so that what the calls keep
  // reuses the memory the parse freed instead of growing an arena per worker (about 8% of
  // the resident memory of a 100,000-step run). Smaller ones keep an arena per thread. The
  // workers start later, with the run.
  if (prepared->model.templates.size() >= kOneArenaSteps) mallopt(M_ARENA_MAX, 1);

  const bool json = *output == "json";
  std::vector<std::string> ids;
  if (!json) {
    for (const core::TemplateCall* s : core::tomlSteps(prepared->model)) ids.push_back(s->name);
  }
  ProgressDisplay display(ids, !json && isatty(STDOUT_FILENO), stdout);
  // The TOML workflow runs on the engine as the model its front end made; the steps are
  // told from the engine's nodes.
  core::DispatchedLeafCalls calls(runtime->dispatcher());
  core::StepReporter steps(prepared->model, json ? nullptr : &display);
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
  const core::RunReport report = steps.report(result);
  cancel_target->release();
  if (json) {
    report.writeJson(stdout);
    std::fputc('\n', stdout);
  } else {
    display.close();
    printSummary(report);
  }
  const int status = report.cancelled ? kExitCancelled : report.succeeded() ? kExitOk : kExitFailed;
  std::fflush(stdout);
  std::fflush(stderr);
  // Calls abandoned past their deadline may still run plugin code that uses the
  // runtime, the workflow and the engine's worker threads; end without destroying them,
  // once their deployers removed what those plugins would leave behind.
  if (report.abandoned > 0) {
    runtime->launcher().deployers().abandon();
    std::_Exit(status);
  }
  return status;
}

}  // namespace plugboard::cli

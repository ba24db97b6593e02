// checkWorkflow() and resolveInputs(): the workflow checks that need installed plugins or
// the user's parameters.
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "core/workflows/leaf_calls.h"
#include "core/workflows/schema.h"
#include "core/workflows/substitution.h"
#include "core/base/text.h"
#include "core/workflows/workflow_check.h"

namespace plugboard::core {
namespace {

// `value` with every reference that is known before the run (inputs, workflow name)
// replaced; strings that refer to what only the run knows (step outputs, items, the
// workflow's status) stay as they are.
Json substituteKnown(const Json& value, const SubstitutionContext& ctx) {
  if (value.is_string()) {
    if (knownOnlyWhileRunning(value)) return value;
    auto r = substitute(value, ctx);
    return r ? *r : value;
  }
  if (value.is_structured()) {
    Json out = value;
    for (auto& item : out) item = substituteKnown(item, ctx);
    return out;
  }
  return value;
}

const Json* declared(const Manifest& manifest, const std::string& rpc, const char* which) {
  const Json& schemas = manifest.schemas;
  auto s = schemas.find(rpc);
  if (s == schemas.end()) return nullptr;
  auto w = s->find(which);
  return w == s->end() || !w->is_object() ? nullptr : &*w;
}

// Checks that `m` provides `rpc` and that `args` fit its declared input schema; false when
// it does not provide it.
bool checkArgs(const std::string& rpc, const Json& args, const std::string& where,
               const Manifest& m, const std::function<bool(const Json&)>& unknown,
               const std::function<void(std::string)>& report) {
  if (!m.legacy() && !m.providesRpc(rpc)) {
    report("plugin '" + m.name + "' does not provide '" + rpc + "'; it provides: " + join(m.provides));
    return false;
  }
  if (const Json* schema = declared(m, rpc, "input")) {
    for (auto& p : checkSchema(args, *schema, where, unknown))
      report(p + " (schema of " + m.name + " " + rpc + ")");
  }
  return true;
}

}  // namespace

RouteQuery routeQueryOf(const WorkflowStep& step) {
  return {.key = step.plugin,
          .version = step.version,
          .rpc = step.rpc,
          .deployer = step.deployer,
          .options = &step.deploy_options,
          .options_from_workflow = true,
          .registry = true};
}

std::vector<WorkflowProblem> checkWorkflow(const Workflow& wf, const Catalog& catalog,
                                           const Json& inputs, const Dispatcher* routes,
                                           const CheckStarts& starts) {
  std::vector<WorkflowProblem> problems;
  const std::string file = wf.file.string();
  std::vector<std::string> installed;
  for (const auto& e : catalog.entries()) installed.push_back(e.manifest.name);
  SubstitutionContext ctx{wf.name, inputs, {}};
  std::unordered_map<std::string_view, const WorkflowStep*> by_id;
  by_id.reserve(wf.steps.size());
  for (const auto& step : wf.steps) by_id.emplace(step.id, &step);

  for (const auto& step : wf.steps) {
    auto report = [&](std::string message) {
      problems.push_back({file, step.pos, step.id, std::move(message)});
    };
    const CatalogEntry* entry = catalog.find(step.plugin, step.version);
    if (routes != nullptr) {
      const Route route = routes->resolve(routeQueryOf(step));
      if (route.kind == Route::Kind::kNone) {
        problems.push_back(
            {file, step.deployer.empty() ? step.pos : step.deploy_pos, step.id, route.reason});
        continue;
      }
      if (route.kind == Route::Kind::kTarget && entry == nullptr) {
        // Its manifest is read through its deployer when it runs, or now if that is cheap.
        // A plugin that cannot start is the step's error when it runs, not the workflow's.
        checkDescribedArgs(routes->launcher(), *route.target, step.rpc,
                           substituteKnown(step.args, ctx), "args", knownOnlyWhileRunning,
                           step.timeout, starts, report);
        continue;
      }
    } else if (!step.deployer.empty()) {
      report("'deploy' needs deployers, and none are configured");
      continue;
    }
    if (entry == nullptr && catalog.conflictFor(step.plugin) != nullptr) {
      report("plugin '" + step.plugin +
             "' is ambiguous: " + catalog.conflictFor(step.plugin)->message);
      continue;
    }
    if (entry == nullptr) {
      const std::string spec = step.plugin + (step.version.empty() ? "" : "@" + step.version);
      if (!step.poll) {
        report("no plugin '" + spec + "' is installed" + didYouMean(step.plugin, installed) +
               " (installed: " + join(installed) +
               "); to let the providers of '" + step.rpc + "' be polled instead, set poll = true");
      } else if (catalog.providers(step.rpc).empty() && catalog.legacy().empty()) {
        report("no plugin '" + spec + "' is installed and no plugin provides '" + step.rpc +
               "' to be polled");
      }
      continue;
    }
    if (!checkArgs(step.rpc, substituteKnown(step.args, ctx), "args", entry->manifest,
                   knownOnlyWhileRunning, report))
      continue;
    // Outputs used from other steps must be ones their plugins declare, when they declare any.
    auto refs = stepReferences(step);
    if (!refs) continue;
    for (const auto& r : *refs) {
      if (r.kind != Reference::Kind::kStepOutput) continue;
      auto source_it = by_id.find(r.step);
      if (source_it == by_id.end()) continue;
      const WorkflowStep* source = source_it->second;
      const CatalogEntry* producer = catalog.find(source->plugin, source->version);
      if (producer == nullptr) continue;
      const Json* output = declared(producer->manifest, source->rpc, "output");
      if (output == nullptr || !output->contains("properties")) continue;
      if (!(*output)["properties"].contains(r.output)) {
        std::vector<std::string> names;
        for (const auto& [n, _] : (*output)["properties"].items()) names.push_back(n);
        report(r.text + ": plugin '" + producer->manifest.name + "' outputs only " + join(names));
      }
    }
  }
  return problems;
}

void checkDescribedArgs(Launcher& launcher, const LaunchTarget& target, const std::string& rpc,
                        const Json& args, const std::string& where,
                        const std::function<bool(const Json&)>& unknown,
                        std::optional<Millis> step_timeout, const CheckStarts& starts,
                        const std::function<void(std::string)>& report) {
  std::optional<Millis> within;
  if (starts.default_timeout && starts.clock != nullptr)
    within = step_timeout.value_or(*starts.default_timeout);
  auto described = launcher.describe(target, starts.cancel, within, starts.clock);
  if (described && *described) {
    checkArgs(rpc, args, where, **described, unknown, report);
  } else if (!described && starts.unstarted_is_problem) {
    report("its " + where + (where == "args" ? " were" : " was") +
           " not checked: its plugin could not be started to read its schema: " +
           described.error().message());
  }
}

std::vector<ModelProblem> checkModelArgs(const WorkflowModel& model,
                                         const std::map<std::string, Json>& args,
                                         const std::string& where,
                                         const std::function<bool(const Json&)>& unknown,
                                         const Dispatcher& routes, const CheckStarts& starts) {
  std::vector<ModelProblem> problems;
  for (const auto& t : model.templates) {
    const auto known = args.find(t.name);
    if (t.kind != Template::Kind::kPlugin || known == args.end()) continue;
    auto report = [&](std::string message) {
      problems.push_back({t.where, "step '" + t.name + "'", std::move(message)});
    };
    const Route route = routes.resolve(routeQuery(t.plugin));
    if (route.kind == Route::Kind::kTarget) {
      checkDescribedArgs(routes.launcher(), *route.target, t.plugin.rpc, known->second, where,
                         unknown, std::nullopt, starts, report);
    } else if (const Manifest* m = route.manifest()) {
      checkArgs(t.plugin.rpc, known->second, where, *m, unknown, report);
    }
  }
  return problems;
}

Expected<Json> resolveInputs(const Workflow& wf, const std::map<std::string, std::string>& params) {
  Json values = Json::object();
  std::vector<std::string> names;
  for (const auto& input : wf.inputs) names.push_back(input.name);
  for (const auto& [name, text] : params) {
    const WorkflowInput* input = nullptr;
    for (const auto& i : wf.inputs) {
      if (i.name == name) input = &i;
    }
    if (input == nullptr) {
      return Error("--param " + name + ": the workflow has no input '" + name +
                   "' (inputs: " + join(names) + ")");
    }
    const Json* def = input->default_value ? &*input->default_value : nullptr;
    if (def != nullptr && def->is_number_integer()) {
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || errno != 0) {
        return Error("--param " + name + "=" + text + ": expected an integer");
      }
      values[name] = v;
    } else if (def != nullptr && def->is_number_float()) {
      char* end = nullptr;
      double v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0')
        return Error("--param " + name + "=" + text + ": expected a number");
      values[name] = v;
    } else if (def != nullptr && def->is_boolean()) {
      if (text != "true" && text != "false") {
        return Error("--param " + name + "=" + text + ": expected true or false");
      }
      values[name] = text == "true";
    } else {
      values[name] = text;
    }
  }
  for (const auto& input : wf.inputs) {
    if (values.contains(input.name)) continue;
    if (!input.default_value) {
      return Error("input '" + input.name + "' has no default: pass --param " + input.name +
                   "=VALUE");
    }
    values[input.name] = *input.default_value;
  }
  return values;
}

}  // namespace plugboard::core

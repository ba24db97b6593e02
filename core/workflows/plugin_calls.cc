#include "core/workflows/plugin_calls.h"

#include "core/workflows/schema.h"

namespace plugboard::core {
namespace {

// {"name":T} with Argo's "inputs":{"parameters":[{"name","value"}]} when there are
// parameters, each value a string (a number or boolean as its JSON text), as Argo's
// controller writes the template into the WorkflowTaskSet its agent reads
// (workflow/controller/plugin_template.go).
Json stepTemplate(const std::string& step, const Json& parameters) {
  Json tmpl = {{"name", step}};
  if (parameters.is_object() && !parameters.empty()) {
    Json list = Json::array();
    for (const auto& [name, value] : parameters.items()) {
      list.push_back({{"name", name},
                      {"value", value.is_string()
                                    ? value
                                    : Json(value.dump(-1, ' ', false, Json::error_handler_t::replace))}});
    }
    tmpl["inputs"] = {{"parameters", std::move(list)}};
  }
  return tmpl;
}

}  // namespace

std::optional<std::string> schemaProblem(const Manifest& manifest, const std::string& rpc,
                                         const Json& args) {
  auto s = manifest.schemas.find(rpc);
  if (s == manifest.schemas.end() || !s->contains("input")) return std::nullopt;
  auto problems = checkSchema(args, (*s)["input"], "args");
  if (problems.empty()) return std::nullopt;
  return problems.front() + " (schema of " + manifest.name + ")";
}

std::string templateContextText(std::string_view workflow, std::string_view nspace,
                                std::string_view uid, const Json& tmpl) {
  const auto quoted = [](const Json& j) {
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
  };
  std::string text = R"({"workflow":{"metadata":{"name":)" + quoted(Json(workflow));
  if (!nspace.empty()) text += R"(,"namespace":)" + quoted(Json(nspace));
  if (!uid.empty()) text += R"(,"uid":)" + quoted(Json(uid));
  return text + R"(}},"template":)" + quoted(tmpl) + "}";
}

PluginCalls::PluginCalls(Dispatcher& dispatcher) : dispatcher_(dispatcher) {}

std::shared_ptr<const Route> PluginCalls::route(const WorkflowStep& step) {
  {
    std::lock_guard lock(mu_);
    if (auto it = routes_.find(&step); it != routes_.end()) return it->second;
  }
  auto made = std::make_shared<const Route>(dispatcher_.resolve({.key = step.plugin,
                                                                 .version = step.version,
                                                                 .rpc = step.rpc,
                                                                 .deployer = step.deployer,
                                                                 .options = &step.deploy_options,
                                                                 .registry = true}));
  std::lock_guard lock(mu_);
  return routes_.emplace(&step, std::move(made)).first->second;
}

std::optional<Outcome> PluginCalls::check(const WorkflowStep& step, const Json& args) {
  const auto r = route(step);
  if (r->kind == Route::Kind::kNone) return Outcome::error(r->reason);
  // A plugin placed through a deployer declares its schema once started (call() checks).
  if (const Manifest* manifest = r->manifest()) {
    if (auto problem = schemaProblem(*manifest, step.rpc, args)) {
      return Outcome{Phase::kFailed, *problem, Json::object(), {}};
    }
  }
  return std::nullopt;
}

Dispatch PluginCalls::call(StepCall call, CallControl& control) {
  const WorkflowStep& step = *call.step;
  DispatchRequest request;
  request.key = step.plugin;
  request.version = step.version;
  request.rpc = step.rpc;
  request.args = std::move(call.args);
  request.context_text =
      templateContextText(call.workflow, {}, {}, stepTemplate(step.id, call.parameters));
  const auto r = route(step);
  CallOptions how;
  if (r->kind == Route::Kind::kTarget) {
    how.admit = [&request](const Manifest& started) -> std::optional<Outcome> {
      if (auto problem = schemaProblem(started, request.rpc, request.args))
        return Outcome{Phase::kFailed, *problem, Json::object(), {}};
      return std::nullopt;
    };
  }
  return dispatcher_.call(*r, request, control, how);
}

}  // namespace plugboard::core

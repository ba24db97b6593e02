#include "core/workflows/plugin_calls.h"

#include "core/workflows/schema.h"

namespace plugboard::core {
namespace {

// The first problem of `args` against the input schema `manifest` declares for `rpc`.
std::optional<std::string> schemaProblem(const Manifest& manifest, const std::string& rpc,
                                         const Json& args) {
  auto s = manifest.schemas.find(rpc);
  if (s == manifest.schemas.end() || !s->contains("input")) return std::nullopt;
  auto problems = checkSchema(args, (*s)["input"], "args");
  if (problems.empty()) return std::nullopt;
  return problems.front() + " (schema of " + manifest.name + ")";
}

Dispatch callThroughDeployer(Launcher& launcher, const LaunchTarget& target,
                             const DispatchRequest& request, CallControl& control) {
  Dispatch d;
  d.plugin = target.plugin;
  auto started = launcher.start(target, &control.starting());
  if (!started) {
    d.outcome = Outcome::error(started.error().message());
    return d;
  }
  StartedPlugin& plugin = **started;
  if (auto problem = schemaProblem(plugin.handle->manifest(), request.rpc, request.args)) {
    d.outcome = {Phase::kFailed, *problem, Json::object(), {}};
    return d;
  }
  d.outcome = Dispatcher::callStarted(plugin, request, control);
  return d;
}

// {"workflow":{"metadata":{"name":W}},"template":{"name":T}}, as text; with parameters,
// the template also has Argo's "inputs":{"parameters":[{"name","value"}]}, each value a
// string (a number or boolean as its JSON text), as Argo's controller writes the template
// into the WorkflowTaskSet its agent reads (workflow/controller/plugin_template.go).
std::string contextText(std::string_view workflow, const std::string& step,
                        const Json& parameters) {
  auto quoted = [](const Json& s) {
    return s.dump(-1, ' ', false, Json::error_handler_t::replace);
  };
  std::string text = R"({"workflow":{"metadata":{"name":)" + quoted(Json(workflow)) +
                     R"(}},"template":{"name":)" + quoted(Json(step));
  if (parameters.is_object() && !parameters.empty()) {
    Json list = Json::array();
    for (const auto& [name, value] : parameters.items())
      list.push_back({{"name", name}, {"value", value.is_string() ? value : Json(quoted(value))}});
    text += R"(,"inputs":{"parameters":)" + quoted(list) + "}";
  }
  return text + "}}";
}

}  // namespace

PluginCalls::PluginCalls(Dispatcher& dispatcher, Launcher* launcher)
    : dispatcher_(dispatcher), launcher_(launcher) {}

std::shared_ptr<const PluginCalls::Route> PluginCalls::route(const WorkflowStep& step) {
  {
    std::lock_guard lock(mu_);
    if (auto it = routes_.find(&step); it != routes_.end()) return it->second;
  }
  auto made = std::make_shared<Route>();
  if (launcher_ != nullptr) {
    const PluginRef ref{step.plugin, step.version, step.deployer, step.deploy_options};
    made->dispatched = launcher_->dispatched(ref, dispatcher_.catalog());
    if (!made->dispatched) made->target = launcher_->place(ref, &dispatcher_.catalog());
  }
  std::lock_guard lock(mu_);
  return routes_.emplace(&step, std::move(made)).first->second;
}

std::optional<Outcome> PluginCalls::check(const WorkflowStep& step, const Json& args) {
  if (const auto r = route(step); !r->dispatched) {
    if (!r->target) return Outcome::error(r->target.error().message());
    return std::nullopt;  // its schema is known once its deployer started it
  }
  if (const CatalogEntry* entry = dispatcher_.resolve(step.plugin, step.version)) {
    if (auto problem = schemaProblem(entry->manifest, step.rpc, args)) {
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
  request.context_text = contextText(call.workflow, step.id, call.parameters);
  if (const auto r = route(step); !r->dispatched) {
    if (!r->target) {
      Dispatch d;
      d.outcome = Outcome::error(r->target.error().message());
      return d;
    }
    return callThroughDeployer(*launcher_, *r->target, request, control);
  }
  return dispatcher_.dispatch(request, control);
}

}  // namespace plugboard::core

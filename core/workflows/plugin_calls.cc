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
  auto started = launcher.start(target);
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

// {"workflow":{"metadata":{"name":W}},"template":{"name":T}}, as text.
std::string contextText(std::string_view workflow, const std::string& step) {
  auto quoted = [](const Json& s) {
    return s.dump(-1, ' ', false, Json::error_handler_t::replace);
  };
  return R"({"workflow":{"metadata":{"name":)" + quoted(Json(workflow)) +
         R"(}},"template":{"name":)" + quoted(Json(step)) + "}}";
}

}  // namespace

PluginCalls::PluginCalls(Dispatcher& dispatcher, Launcher* launcher)
    : dispatcher_(dispatcher), launcher_(launcher) {}

bool PluginCalls::dispatched(const WorkflowStep& step) const {
  return launcher_ == nullptr ||
         launcher_->dispatched(
             PluginRef{step.plugin, step.version, step.deployer, step.deploy_options},
             dispatcher_.catalog());
}

Expected<LaunchTarget> PluginCalls::place(const WorkflowStep& step) const {
  return launcher_->place(PluginRef{step.plugin, step.version, step.deployer, step.deploy_options},
                          &dispatcher_.catalog());
}

std::optional<Outcome> PluginCalls::check(const WorkflowStep& step, const Json& args) {
  if (!dispatched(step)) {
    auto target = place(step);
    if (!target) return Outcome::error(target.error().message());
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
  request.context_text = contextText(call.workflow, step.id);
  if (!dispatched(step)) {
    auto target = place(step);
    if (!target) {
      Dispatch d;
      d.outcome = Outcome::error(target.error().message());
      return d;
    }
    return callThroughDeployer(*launcher_, *target, request, control);
  }
  return dispatcher_.dispatch(request, control);
}

}  // namespace plugboard::core

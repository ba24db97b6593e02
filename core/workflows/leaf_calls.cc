#include "core/workflows/leaf_calls.h"

#include "core/base/text.h"
#include "core/workflows/schema.h"

namespace plugboard::core {
namespace {

bool runsContainer(const Template& t) {
  return t.kind == Template::Kind::kContainer || t.kind == Template::Kind::kScript;
}

std::string text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::optional<std::string> schemaProblem(const Manifest& manifest, const std::string& rpc,
                                         const Json& args) {
  auto s = manifest.schemas.find(rpc);
  if (s == manifest.schemas.end() || !s->contains("input")) return std::nullopt;
  auto problems = checkSchema(args, (*s)["input"], "args");
  if (problems.empty()) return std::nullopt;
  return problems.front() + " (schema of " + manifest.name + ")";
}

RouteQuery routeQuery(const PluginCall& p) {
  return {.key = p.key,
          .version = p.version,
          .rpc = p.rpc,
          .deployer = p.deployer,
          .options = p.deploy_options.is_null() ? nullptr : &p.deploy_options,
          .options_from_workflow = !p.deploy_options_configured,
          .registry = true};
}

std::string templateContextText(std::string_view workflow, std::string_view nspace,
                                std::string_view uid, std::string_view template_text) {
  const auto quoted = [](const Json& j) {
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
  };
  std::string text = R"({"workflow":{"metadata":{"name":)" + quoted(Json(workflow));
  if (!nspace.empty()) text += R"(,"namespace":)" + quoted(Json(nspace));
  if (!uid.empty()) text += R"(,"uid":)" + quoted(Json(uid));
  text.reserve(text.size() + template_text.size() + 16);
  text += R"(}},"template":)";
  text += template_text;
  text += '}';
  return text;
}

Json containerRunArtifact() { return {{"mode", "run-to-end"}}; }

Json containerTemplate(const LeafCall& call) {
  const Template& tmpl = *call.tmpl;
  Json t = Json::parse(call.template_text, nullptr, false);
  if (!t.is_object()) t = Json::object();
  if (!t.contains("name")) t["name"] = tmpl.name;
  const bool script = tmpl.kind == Template::Kind::kScript;
  const char* kind = script ? "script" : "container";
  t.erase(script ? "container" : "script");
  Json spec = t.contains(kind) && t[kind].is_object() ? t[kind] : Json::object();
  const ContainerRun& c = call.container;
  spec["image"] = c.image;
  spec["command"] = c.command;
  spec["args"] = c.args;
  Json env = Json::array();
  for (const auto& [name, value] : c.env) env.push_back({{"name", name}, {"value", value}});
  spec["env"] = std::move(env);
  if (c.working_dir.empty()) {
    spec.erase("workingDir");
  } else {
    spec["workingDir"] = c.working_dir;
  }
  if (script) spec["source"] = c.source.value_or("");
  t[kind] = std::move(spec);
  const bool has_outputs =
      t.contains("outputs") && t["outputs"].is_object() && t["outputs"].contains("parameters");
  if (!has_outputs) {
    Json parameters = Json::array();
    for (const auto& o : tmpl.outputs) {
      if (o.from != OutputParameterDecl::From::kPath) continue;
      Json from = {{"path", o.source}};
      if (o.default_value) from["default"] = text(*o.default_value);
      parameters.push_back({{"name", o.name}, {"valueFrom", std::move(from)}});
    }
    if (!parameters.empty()) t["outputs"]["parameters"] = std::move(parameters);
  }
  return t;
}

DispatchedLeafCalls::DispatchedLeafCalls(Dispatcher& dispatcher) : dispatcher_(dispatcher) {}

std::shared_ptr<const Route> DispatchedLeafCalls::pluginRoute(const LeafCall& call) {
  const PluginCall& p = call.plugin;
  // By what decides the route, not by template: a workflow whose steps call one plugin
  // (a TOML file has a template per step) resolves it once.
  std::string key = p.key + '\n' + p.version + '\n' + p.rpc + '\n' + p.deployer + '\n' +
                    (p.deploy_options.empty() ? std::string() : p.deploy_options.dump()) +
                    (p.deploy_options_configured ? "\n(configured)" : "");
  std::shared_ptr<const Route> route;
  {
    std::lock_guard lock(mu_);
    if (auto it = routes_.find(key); it != routes_.end()) route = it->second;
  }
  if (!route) {
    auto made = std::make_shared<const Route>(dispatcher_.resolve(routeQuery(p)));
    std::lock_guard lock(mu_);
    route = routes_.emplace(std::move(key), std::move(made)).first->second;
  }
  if (route->kind == Route::Kind::kPoll && !p.poll && !p.key.empty()) {
    auto refused = std::make_shared<Route>();
    const Json filled = Json::parse(call.template_text, nullptr, false);
    const std::string name = filled.is_object() && filled.contains("name") &&
                                     filled["name"].is_string()
                                 ? filled["name"].get<std::string>()
                                 : call.tmpl->name;
    refused->reason = "plugin '" + p.key + "' is not installed (template '" + name +
                      "' does not poll the plugins that provide '" + p.rpc + "')";
    return refused;
  }
  return route;
}

std::shared_ptr<const Route> DispatchedLeafCalls::containerRoute() {
  std::lock_guard lock(mu_);
  if (container_) return container_;
  Route route;
  const DeployerSet& deployers = dispatcher_.launcher().deployers();
  const auto found = deployers.forKind(kContainerRunKind);
  if (found.empty()) {
    std::vector<std::string> names;
    for (const CatalogEntry* e : deployers.inOrder()) names.push_back(e->manifest.name);
    route.reason = std::string(
                       "no installed deployer runs container and script templates (none "
                       "deploys artifact kind '") +
                   kContainerRunKind + "'; installed: " + join(names, ", ", "none") + ")";
  } else {
    LaunchTarget target;
    target.deployer = found.front();
    target.plugin = kContainerRunKind;
    target.kind = kContainerRunKind;
    target.artifact = containerRunArtifact();
    route.kind = Route::Kind::kTarget;
    route.target = std::make_shared<const LaunchTarget>(std::move(target));
  }
  container_ = std::make_shared<const Route>(std::move(route));
  return container_;
}

std::optional<Outcome> DispatchedLeafCalls::check(const LeafCall& call) {
  if (runsContainer(*call.tmpl)) {
    const auto r = containerRoute();
    if (r->kind == Route::Kind::kNone) return Outcome::error(r->reason);
    return std::nullopt;
  }
  if (call.tmpl->kind != Template::Kind::kPlugin) {
    return Outcome::error("template '" + call.tmpl->name + "' is not a leaf that runs a call");
  }
  const auto r = pluginRoute(call);
  if (r->kind == Route::Kind::kNone || r->kind == Route::Kind::kConflict)
    return Outcome::error(r->reason);
  // A plugin placed through a deployer declares its schema once started (call() checks).
  if (const Manifest* manifest = r->manifest()) {
    if (auto problem = schemaProblem(*manifest, call.plugin.rpc, call.plugin.args))
      return Outcome{Phase::kFailed, *problem, Json::object(), {}};
  }
  return std::nullopt;
}

Dispatch DispatchedLeafCalls::call(const LeafCall& call, CallControl& control) {
  DispatchRequest request;
  if (runsContainer(*call.tmpl)) {
    request.key = kContainerRunKind;
    request.args = Json::object();
    request.context_text = templateContextText(
        call.workflow_name, kLocalNamespace, call.workflow_uid,
        containerTemplate(call).dump(-1, ' ', false, Json::error_handler_t::replace));
    return dispatcher_.call(*containerRoute(), request, control);
  }
  const PluginCall& p = call.plugin;
  request.key = p.key;
  request.version = p.version;
  request.rpc = p.rpc;
  request.args = p.args;
  request.context_text = templateContextText(
      call.workflow_name, kLocalNamespace, call.workflow_uid,
      call.template_text.empty() ? Json{{"name", call.tmpl->name}}.dump() : call.template_text);
  const auto r = pluginRoute(call);
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

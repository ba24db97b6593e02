// core/workflows/leaf_calls.h: the engine's leaves (core/workflows/engine.h) run for real.
//
// Plugin leaves go through the dispatcher: resolved once per key (name, version, RPC, the
// deployer it chooses and its options, registry plugins by name), args checked against the input
// schema of the plugin's manifest (before the call when the manifest is known without
// starting it, else once started), and called with the request Argo's agent sends:
// {"workflow":{"metadata":{"name","namespace","uid"}},"template":<the filled template>},
// plus rpc, key, via and args. A key that names no plugin polls the providers of the RPC
// only when the template says so (PluginCall::poll).
//
// Container and script leaves go to the deployer that declares artifact kind
// "container-run" (the first by priority: DeployerSet::forKind), opened once with the
// artifact {"mode":"run-to-end"}; each call runs one container to its end with the same
// request, its template Argo's container or script template with every tag filled
// (docs/containers.md, "Container and script templates"). No such deployer: check() ends
// the leaf with an Error that says so.
//
// Thread-safety: check() on the scheduling thread, call() on several workers at once.
// The dispatcher must outlive this object and any call it abandoned.
#ifndef PLUGBOARD_CORE_WORKFLOWS_LEAF_CALLS_H_
#define PLUGBOARD_CORE_WORKFLOWS_LEAF_CALLS_H_

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/routing/dispatcher.h"
#include "core/workflows/engine.h"

namespace plugboard::core {

// What the dispatcher is asked for a plugin template: its key, version, RPC, deployer and
// that deployer's options, registry plugins by name. The one query: the leaves, the
// checks before a run (Runtime::prepareModel) and validate (checkModelArgs) ask it alike.
// The view holds references into `p`, which must outlive it.
RouteQuery routeQuery(const PluginCall& p);

// The artifact kind of a deployer that runs container and script templates to their end,
// and the artifact it is opened with.
Json containerRunArtifact();  // {"mode":"run-to-end"}

// The first problem of `args` against the input schema `manifest` declares for `rpc`,
// naming the plugin; nullopt when they pass or it declares none.
std::optional<std::string> schemaProblem(const Manifest& manifest, const std::string& rpc,
                                         const Json& args);

// The members a workflow's plugin call adds to its request, as JSON text, as Argo's agent
// sends them (ExecuteTemplateArgs; pkg/plugins/executor/objectmeta.go):
// {"workflow":{"metadata":{"name":W[,"namespace":N,"uid":U]}},"template":T}; namespace
// and uid when not empty, T the template's JSON text as given. The one place a workflow's
// request context is written.
std::string templateContextText(std::string_view workflow, std::string_view nspace,
                                std::string_view uid, std::string_view template_text);

// The namespace a local run's requests name (Argo's agent always sends one): Kubernetes'
// default.
inline constexpr char kLocalNamespace[] = "default";

// The template a container or script leaf's deployer receives: Argo's, as
// `call.template_text` holds it, with its container (or script) fields those of
// `call.container` and, when it has none, outputs.parameters from the template's
// valueFrom.path outputs.
Json containerTemplate(const LeafCall& call);

class DispatchedLeafCalls final : public LeafCalls {
 public:
  explicit DispatchedLeafCalls(Dispatcher& dispatcher);

  std::optional<Outcome> check(const LeafCall& call) override;
  Dispatch call(const LeafCall& call, CallControl& control) override;

 private:
  // Where a plugin leaf's calls go, resolved once per key, version, RPC and deployer.
  std::shared_ptr<const Route> pluginRoute(const LeafCall& call);
  // Where container and script leaves go, resolved once.
  std::shared_ptr<const Route> containerRoute();

  Dispatcher& dispatcher_;
  std::mutex mu_;  // guards routes_ and container_
  std::unordered_map<std::string, std::shared_ptr<const Route>> routes_;
  std::shared_ptr<const Route> container_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_LEAF_CALLS_H_

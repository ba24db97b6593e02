// plugboard/host/argo.h: Argo Workflows' executor-plugin messages, shared by the runtime
// (which answers Argo's agent: core/serving/argo.h) and the deployers that call Argo
// plugin sidecars (deployers/argo).
//
// ExecuteTemplateArgs (what Argo's agent POSTs to /api/v1/template.execute):
//   {"workflow":{"metadata":{"name","namespace","uid"}},
//    "template":{..., "plugin":{"<key>":{...args}}}}
// ExecuteTemplateReply:
//   {"node":{"phase","message","outputs":{"parameters":[{"name","value"}]}},
//    "requeue":"<Go duration>"}
// plugboard's results (plugboard::Result) hold parameters as an object of strings and the
// delay as "requeue_ms". Free functions; thread-safe.
#ifndef PLUGBOARD_HOST_ARGO_H_
#define PLUGBOARD_HOST_ARGO_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "plugboard/host/expected.h"

namespace plugboard::host {

// Whether Argo's agent can decode `outputs` as its Outputs: result and exitCode strings,
// parameters plugboard's object of strings (sent as Argo's list of {name, value}),
// artifacts a list of Argo's Artifact objects. Other members are passed on (Argo ignores
// them). The error names the member: "outputs.result is a number, not a string".
Status checkArgoOutputs(const nlohmann::json& outputs);

// The ExecuteTemplateArgs text for a plugboard request object (what a plugin or a
// deployer's handle receives: "workflow" and "template" when the caller has them, "args").
// The workflow's metadata and the template are kept (a template without a name gets
// `template_name`), and template.plugin becomes {key: args}.
std::string executeTemplateArgs(const nlohmann::json& request, std::string_view key,
                                std::string_view template_name);

// The plugboard result JSON text for an ExecuteTemplateReply body: the node's phase,
// message and outputs (Argo's parameter list as an object; numbers and booleans become
// their text, as Argo's AnyString reads them), and requeue as requeue_ms. A reply without
// a node ({}, or JSON null, which Argo's decoder reads as no node) is
// {"phase":"NotHandled"}. Errors say what is wrong with the body: not
// JSON, not an object, an unknown phase, outputs Argo could not decode, a bad duration.
Expected<std::string> resultOfExecuteTemplateReply(std::string_view body);

}  // namespace plugboard::host

#endif  // PLUGBOARD_HOST_ARGO_H_

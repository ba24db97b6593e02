// core/serving/argo.h: Argo Workflows' executor-plugin messages.
//
// ExecuteTemplateArgs (what Argo's agent POSTs to /api/v1/template.execute):
//   {"workflow":{"metadata":{"name","namespace","uid"}},
//    "template":{..., "plugin":{"<key>":{...args}}}}
// ExecuteTemplateReply:
//   {"node":{"phase","message","outputs":{"parameters":[{"name","value"}]}},
//    "requeue":"<Go duration>"}
// Free functions; thread-safe.
#ifndef PLUGBOARD_CORE_SERVING_ARGO_H_
#define PLUGBOARD_CORE_SERVING_ARGO_H_

#include <string>
#include <string_view>

#include <plugboard/host/argo.h>

#include "core/base/duration.h"
#include "core/base/expected.h"
#include "core/routing/dispatcher.h"

namespace plugboard::core {

// The dispatch request an ExecuteTemplateArgs body asks for. Errors say what is wrong
// with the body's shape, e.g. "template.plugin: expected exactly one key, got 2".
Expected<DispatchRequest> parseExecuteTemplateArgs(std::string_view body);

// Whether Argo's agent can decode `outputs` (the host kit's, plugboard/host/argo.h).
using host::checkArgoOutputs;
// `outcome` itself when checkArgoOutputs() accepts its outputs, else an Error naming
// `plugin` (name@version) and the member.
void keepArgoDecodable(Outcome& outcome, std::string_view plugin);

// The reply's JSON text for an outcome. Parameters keep the plugin's order
// (Outcome::parameter_order). Succeeded, Failed and Error are never requeued; Running and
// Pending are requeued after their own delay when it is above zero, else after
// `poll_interval` (REQUIRES: poll_interval > 0).
std::string executeTemplateReply(const Outcome& outcome, Millis poll_interval);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_SERVING_ARGO_H_

#include "core/argo.h"

namespace plugboard::core {

Expected<DispatchRequest> parseExecuteTemplateArgs(std::string_view body) {
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error("the body is not valid JSON");
  if (!j.is_object()) return Error("the body must be a JSON object");
  auto workflow = j.find("workflow");
  if (workflow != j.end() && !workflow->is_object()) return Error("workflow: expected an object");
  auto tmpl = j.find("template");
  if (tmpl == j.end() || !tmpl->is_object()) return Error("template: expected an object");
  auto plugin = tmpl->find("plugin");
  if (plugin == tmpl->end() || !plugin->is_object()) {
    return Error("template.plugin: expected an object with exactly one key, the plugin's name");
  }
  if (plugin->size() != 1) {
    return Error("template.plugin: expected exactly one key, got " + std::to_string(plugin->size()));
  }
  DispatchRequest request;
  request.key = plugin->begin().key();
  request.args = plugin->begin().value();
  request.rpc = "template.execute";
  // The plugin sees the body as Argo sent it (template.plugin included, as Argo plugins
  // look for their key there); moved, not copied.
  request.context = Json::object();
  request.context["workflow"] = workflow == j.end() ? Json::object() : std::move(*workflow);
  request.context["template"] = std::move(*tmpl);
  request.context_text = std::string(body);  // forwarded as received, not serialised again
  return request;
}

Json executeTemplateReply(const Outcome& outcome, Millis poll_interval) {
  Json node = {{"phase", phaseName(outcome.phase)}};
  if (outcome.phase == Phase::kNotHandled) node["phase"] = "Failed";
  if (!outcome.message.empty()) node["message"] = outcome.message;
  Json outputs = outcome.outputs;
  if (auto p = outputs.find("parameters"); p != outputs.end() && p->is_object()) {
    Json list = Json::array();
    for (const auto& [name, value] : p->items()) list.push_back({{"name", name}, {"value", value}});
    *p = std::move(list);
  }
  if (!outputs.empty()) node["outputs"] = std::move(outputs);
  Json reply = {{"node", std::move(node)}};
  if (outcome.phase == Phase::kRunning) {
    reply["requeue"] = formatGoDuration(outcome.requeue.value_or(poll_interval));
  }
  return reply;
}

}  // namespace plugboard::core

#include "core/argo.h"

#include "core/text.h"

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
  request.args = std::move(plugin->begin().value());
  request.rpc = "template.execute";
  // The plugin sees the body as Argo sent it (template.plugin included, as Argo plugins
  // look for their key there), forwarded as received rather than serialised again.
  request.context_text = std::string(body);
  return request;
}

std::string executeTemplateReply(const Outcome& outcome, Millis poll_interval) {
  // Written as text directly, not built as a JSON value first: this is the serve hot path.
  std::string out = R"({"node":{"phase":)";
  appendJsonString(out, outcome.phase == Phase::kNotHandled ? "Failed" : phaseName(outcome.phase));
  if (!outcome.message.empty()) {
    out += R"(,"message":)";
    appendJsonString(out, outcome.message);
  }
  if (outcome.outputs.is_object() && !outcome.outputs.empty()) {
    out += R"(,"outputs":{)";
    bool first = true;
    for (const auto& [name, value] : outcome.outputs.items()) {
      if (!first) out += ',';
      first = false;
      appendJsonString(out, name);
      out += ':';
      if (name != "parameters" || !value.is_object()) {
        out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
        continue;
      }
      // Argo wants parameters as a list of {name, value}.
      out += '[';
      bool first_parameter = true;
      for (const auto& [parameter, v] : value.items()) {
        out += first_parameter ? R"({"name":)" : R"(,{"name":)";
        first_parameter = false;
        appendJsonString(out, parameter);
        out += R"(,"value":)";
        if (v.is_string()) {
          appendJsonString(out, v.get_ref<const std::string&>());
        } else {
          out += v.dump(-1, ' ', false, Json::error_handler_t::replace);
        }
        out += '}';
      }
      out += ']';
    }
    out += '}';
  }
  out += '}';
  if (outcome.phase == Phase::kRunning) {
    out += R"(,"requeue":)";
    appendJsonString(out, formatGoDuration(outcome.requeue.value_or(poll_interval)));
  }
  out += '}';
  return out;
}

}  // namespace plugboard::core

#include "plugboard/host/argo.h"

#include <algorithm>
#include <climits>
#include <iterator>

#include "plugboard/host/json_text.h"
#include "plugboard/host/options.h"

namespace plugboard::host {

namespace {

using Json = nlohmann::json;

// "outputs.result is a number, not a string"
Error notA(const std::string& member, const Json& value, std::string_view expected) {
  return Error(member + " is " + (value.is_array() || value.is_object() ? "an " : "a ") +
               value.type_name() + ", not " + std::string(expected));
}

Status checkArtifact(const Json& a, const std::string& at) {
  if (!a.is_object()) return notA(at, a, "an object");
  auto name = a.find("name");
  if (name == a.end() || !name->is_string()) return Error(at + ".name must be a string");
  // Members of Argo's Artifact and ArtifactLocation by the JSON type Go decodes them from;
  // null decodes as absent.
  static constexpr std::string_view kStrings[] = {"path", "from", "globalName", "subPath",
                                                  "fromExpression"};
  static constexpr std::string_view kBooleans[] = {"optional", "recurseMode", "deleted",
                                                   "archiveLogs"};
  static constexpr std::string_view kObjects[] = {"archive", "artifactGC",  "s3",    "git",
                                                  "http",    "artifactory", "hdfs",  "raw",
                                                  "oss",     "gcs",         "azure", "plugin"};
  for (const auto& [key, v] : a.items()) {
    if (v.is_null()) continue;
    const std::string member = at + "." + key;
    if (std::find(std::begin(kStrings), std::end(kStrings), key) != std::end(kStrings)) {
      if (!v.is_string()) return notA(member, v, "a string");
    } else if (std::find(std::begin(kBooleans), std::end(kBooleans), key) != std::end(kBooleans)) {
      if (!v.is_boolean()) return notA(member, v, "a boolean");
    } else if (std::find(std::begin(kObjects), std::end(kObjects), key) != std::end(kObjects)) {
      if (!v.is_object()) return notA(member, v, "an object");
    } else if (key == "mode") {
      if (!v.is_number_integer() || v.get<long long>() < INT32_MIN ||
          v.get<long long>() > INT32_MAX)
        return Error(member + " must be a 32-bit integer");
    }
  }
  return Status::Ok();
}

// Argo's parameter list [{"name","value"}] as plugboard's object of strings.
Expected<Json> parametersOf(const Json& list) {
  if (!list.is_array()) return notA("outputs.parameters", list, "a list");
  Json out = Json::object();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Json& p = list[i];
    const std::string at = "outputs.parameters[" + std::to_string(i) + "]";
    if (!p.is_object()) return notA(at, p, "an object");
    auto name = p.find("name");
    if (name == p.end() || !name->is_string()) return Error(at + ".name must be a string");
    auto value = p.find("value");
    if (value == p.end() || value->is_null()) {
      out[name->get<std::string>()] = "";
    } else if (value->is_string()) {
      out[name->get<std::string>()] = *value;
    } else if (value->is_number() || value->is_boolean()) {
      out[name->get<std::string>()] = value->dump();  // Argo's AnyString reads them as text
    } else {
      return notA(at + ".value", *value, "a string");
    }
  }
  return out;
}

}  // namespace

Status checkArgoOutputs(const Json& outputs) {
  if (!outputs.is_object()) return notA("outputs", outputs, "an object");
  for (const auto& [key, v] : outputs.items()) {
    if (v.is_null()) continue;
    if (key == "result" || key == "exitCode") {
      if (!v.is_string()) return notA("outputs." + key, v, "a string");
    } else if (key == "parameters") {
      if (!v.is_object()) return notA("outputs.parameters", v, "an object of strings");
      for (const auto& [name, value] : v.items()) {
        if (!value.is_string()) return notA("outputs.parameters." + name, value, "a string");
      }
    } else if (key == "artifacts") {
      if (!v.is_array()) return notA("outputs.artifacts", v, "a list");
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (Status st = checkArtifact(v[i], "outputs.artifacts[" + std::to_string(i) + "]"); !st)
          return st;
      }
    }
  }
  return Status::Ok();
}

std::string executeTemplateArgs(const Json& request, std::string_view key,
                                std::string_view template_name) {
  // Written as text around the library's serialisation of each member, without copying
  // the request's members into a new value first: this runs once per call.
  const auto dump = [](const Json& v) {
    return v.dump(-1, ' ', false, Json::error_handler_t::replace);
  };
  std::string out = R"({"workflow":)";
  auto workflow = request.find("workflow");
  out +=
      workflow != request.end() && workflow->is_object() ? dump(*workflow) : R"({"metadata":{}})";
  out += R"(,"template":{)";
  bool named = false;
  if (auto tmpl = request.find("template"); tmpl != request.end() && tmpl->is_object()) {
    for (const auto& [member, value] : tmpl->items()) {
      if (member == "plugin") continue;
      if (member == "name") {
        if (!value.is_string() || value.get_ref<const std::string&>().empty()) continue;
        named = true;
      }
      out += dump(Json(member));
      out += ':';
      out += dump(value);
      out += ',';
    }
  }
  if (!named) out += R"("name":)" + dump(Json(std::string(template_name))) + ',';
  out += R"("plugin":{)" + dump(Json(std::string(key))) + ':';
  auto args = request.find("args");
  out += args != request.end() && !args->is_null() ? dump(*args) : "{}";
  out += "}}}";
  return out;
}

Expected<std::string> resultOfExecuteTemplateReply(std::string_view body) {
  if (holdsNul(body)) return Error(std::string("the reply ") + kNulText);
  if (jsonDeeperThan(body)) return Error("the reply is " + tooDeepText());
  Json reply = Json::parse(body, nullptr, false);
  if (reply.is_discarded()) return Error("the reply is not JSON");
  // Go's decoder reads `null` into the reply as nothing at all: no node, as {} has none.
  if (reply.is_null()) return std::string(R"({"phase":"NotHandled"})");
  if (!reply.is_object()) return Error("the reply is not a JSON object");
  auto node = reply.find("node");
  if (node == reply.end() || node->is_null()) return std::string(R"({"phase":"NotHandled"})");
  if (!node->is_object()) return notA("node", *node, "an object");
  auto phase = node->find("phase");
  static constexpr std::string_view kPhases[] = {"Succeeded", "Failed", "Error", "Running",
                                                 "Pending"};
  if (phase == node->end() || !phase->is_string() ||
      std::find(std::begin(kPhases), std::end(kPhases), phase->get_ref<const std::string&>()) ==
          std::end(kPhases)) {
    return Error("node.phase " +
                 (phase == node->end()
                      ? std::string("is missing")
                      : "is " + phase->dump(-1, ' ', false, Json::error_handler_t::replace)) +
                 ": expected Succeeded, Failed, Error, Running or Pending");
  }
  // Written as text, not built as a value first: this runs once per call.
  std::string result = R"({"phase":")" + phase->get<std::string>() + '"';
  if (auto message = node->find("message"); message != node->end() && !message->is_null()) {
    if (!message->is_string()) return notA("node.message", *message, "a string");
    if (!message->get_ref<const std::string&>().empty())
      result += R"(,"message":)" + message->dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  if (auto outputs = node->find("outputs"); outputs != node->end() && !outputs->is_null()) {
    if (!outputs->is_object()) return notA("node.outputs", *outputs, "an object");
    if (auto p = outputs->find("parameters"); p != outputs->end() && !p->is_null()) {
      auto parameters = parametersOf(*p);
      if (!parameters) return Error("node." + parameters.error().message());
      *p = std::move(*parameters);
    }
    if (Status st = checkArgoOutputs(*outputs); !st) return Error("node." + st.error().message());
    if (!outputs->empty())
      result += R"(,"outputs":)" + outputs->dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  if (auto requeue = reply.find("requeue"); requeue != reply.end() && !requeue->is_null()) {
    if (!requeue->is_string()) return notA("requeue", *requeue, "a string");
    auto delay = parseDuration(requeue->get_ref<const std::string&>());
    if (!delay) return Error("requeue: " + delay.error().message());
    result += R"(,"requeue_ms":)" + std::to_string(delay->count());
  }
  result += '}';
  return result;
}

}  // namespace plugboard::host

#include "core/serving/argo.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

#include <plugboard/host/json_text.h>

#include "core/base/text.h"

namespace plugboard::core {

namespace {

// Reads an ExecuteTemplateArgs body through the JSON library's SAX interface: the whole
// body is checked as JSON, but only template.plugin's member is built as a value. The
// plugin gets the body as received, so building the rest would be thrown away. Where a
// member repeats, the last one counts, as when the body is parsed into a value.
class ArgoBodyReader : public Json::json_sax_t {
 public:
  using Type = Json::value_t;
  Type body = Type::discarded, workflow = Type::discarded, tmpl = Type::discarded,
       plugin = Type::discarded;
  std::vector<std::string> keys;  // template.plugin's members
  Json args;
  bool too_deep = false;  // stopped at a container nested deeper than host::kMaxJsonDepth

  bool null() override { return value(Type::null, nullptr); }
  bool boolean(bool v) override { return value(Type::boolean, v); }
  bool number_integer(number_integer_t v) override { return value(Type::number_integer, v); }
  bool number_unsigned(number_unsigned_t v) override { return value(Type::number_unsigned, v); }
  bool number_float(number_float_t v, const string_t&) override {
    return value(Type::number_float, v);
  }
  bool string(string_t& v) override { return value(Type::string, std::move(v)); }
  bool binary(binary_t& v) override { return value(Type::binary, std::move(v)); }
  bool start_object(std::size_t) override { return open(Json::object()); }
  bool start_array(std::size_t) override { return open(Json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (!building_.empty()) {
      pending_key_ = std::move(k);
    } else if (depth_ == 1) {
      top_ = std::move(k);
    } else if (depth_ == 2 && inTemplate()) {
      second_ = std::move(k);
    } else if (depth_ == 3 && inPlugin()) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(std::move(k));
      current_is_args_ = true;
      return true;
    }
    current_is_args_ = false;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  bool inTemplate() const { return top_ == "template" && tmpl == Type::object; }
  bool inPlugin() const { return inTemplate() && second_ == "plugin" && plugin == Type::object; }

  // Notes the type of a value at a place that matters; true when it is template.plugin's
  // member, which is then built.
  bool note(Type type) {
    switch (depth_) {
      case 0:
        body = type;
        return false;
      case 1:
        if (top_ == "workflow") workflow = type;
        if (top_ == "template") {
          tmpl = type;
          plugin = Type::discarded;
          keys.clear();
        }
        return false;
      case 2:
        if (inTemplate() && second_ == "plugin") {
          plugin = type;
          keys.clear();
        }
        return false;
      case 3:
        return inPlugin() && current_is_args_;
      default:
        return false;
    }
  }

  Json* place(Json v) {
    if (building_.empty()) {
      args = std::move(v);
      return &args;
    }
    Json& parent = *building_.back();
    if (parent.is_object()) return &(parent[pending_key_] = std::move(v));
    parent.push_back(std::move(v));
    return &parent.back();
  }

  template <class V>
  bool value(Type type, V&& v) {
    if (!building_.empty() || note(type)) place(Json(std::forward<V>(v)));
    return true;
  }

  bool open(Json empty) {
    if (static_cast<std::size_t>(depth_) == host::kMaxJsonDepth) {
      too_deep = true;
      return false;
    }
    if (!building_.empty() || note(empty.type())) building_.push_back(place(std::move(empty)));
    ++depth_;
    return true;
  }

  bool close() {
    --depth_;
    if (!building_.empty()) building_.pop_back();
    return true;
  }

  int depth_ = 0;
  std::string top_, second_, pending_key_;
  bool current_is_args_ = false;
  std::vector<Json*> building_;
};

}  // namespace

void keepArgoDecodable(Outcome& outcome, std::string_view plugin) {
  if (outcome.outputs.is_object() && outcome.outputs.empty()) return;
  Status st = checkArgoOutputs(outcome.outputs);
  if (st) return;
  const std::string_view name = plugin.substr(0, plugin.find('@'));
  outcome = Outcome::error("plugin '" + std::string(name) +
                           "' returned outputs Argo cannot decode: " + st.error().message());
}

Expected<DispatchRequest> parseExecuteTemplateArgs(std::string_view body) {
  // The JSON library would stop at a NUL byte and take the object before it, while the
  // whole body, the bytes after it too, travels on to the plugin.
  if (host::holdsNul(body)) return Error(std::string("the body ") + host::kNulText);
  ArgoBodyReader reader;
  if (!Json::sax_parse(body, &reader)) {
    return Error(reader.too_deep ? "the body is " + host::tooDeepText()
                                 : "the body is not valid JSON");
  }
  if (reader.body != Json::value_t::object) return Error("the body must be a JSON object");
  if (reader.workflow != Json::value_t::discarded && reader.workflow != Json::value_t::object) {
    return Error("workflow: expected an object");
  }
  if (reader.tmpl != Json::value_t::object) return Error("template: expected an object");
  if (reader.plugin != Json::value_t::object) {
    return Error("template.plugin: expected an object with exactly one key, the plugin's name");
  }
  if (reader.keys.size() != 1) {
    return Error("template.plugin: expected exactly one key, got " +
                 std::to_string(reader.keys.size()));
  }
  DispatchRequest request;
  request.key = reader.keys.front();
  request.args = std::move(reader.args);
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
      // outputs.values (typed values of the parameters, docs/arcaflow.md) is not Argo's:
      // its parameters are the rendering Argo takes.
      if (name == "values") continue;
      if (!first) out += ',';
      first = false;
      appendJsonString(out, name);
      out += ':';
      if (name != "parameters" || !value.is_object()) {
        out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
        continue;
      }
      // Argo wants parameters as a list of {name, value}, in the plugin's order.
      out += '[';
      bool first_parameter = true;
      const auto add = [&](const std::string& parameter, const Json& v) {
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
      };
      if (outcome.parameter_order.size() == value.size()) {
        for (const auto& parameter : outcome.parameter_order) {
          if (auto it = value.find(parameter); it != value.end()) add(parameter, *it);
        }
      } else {
        for (const auto& [parameter, v] : value.items()) add(parameter, v);
      }
      out += ']';
    }
    out += '}';
  }
  out += '}';
  if (outcome.phase == Phase::kRunning || outcome.phase == Phase::kPending) {
    // Argo calls again only when requeue > 0: a Running node answered "0s" would stay
    // Running forever, so no delay and a zero delay both mean the poll interval.
    const Millis requeue =
        outcome.requeue && outcome.requeue->count() > 0 ? *outcome.requeue : poll_interval;
    out += R"(,"requeue":)";
    appendJsonString(out, formatGoDuration(requeue));
  }
  out += '}';
  return out;
}

}  // namespace plugboard::core

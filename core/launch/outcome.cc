#include "core/launch/outcome.h"

#include <algorithm>

namespace plugboard::core {
namespace {

std::optional<Phase> phaseFromName(std::string_view name) {
  if (name == "Succeeded") return Phase::kSucceeded;
  if (name == "Failed") return Phase::kFailed;
  if (name == "Error") return Phase::kError;
  if (name == "Running") return Phase::kRunning;
  if (name == "NotHandled") return Phase::kNotHandled;
  return std::nullopt;
}

// Records the names of outputs.parameters in the order the plugin wrote them, while the
// result is parsed (depth 1: the result's keys, 2: outputs', 3: parameters').
class ParameterOrder {
 public:
  explicit ParameterOrder(std::vector<std::string>& names) : names_(names) {}
  bool operator()(int depth, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::key) {
      const auto& key = parsed.get_ref<const std::string&>();
      if (depth == 1) {
        top_ = key;
      } else if (depth == 2 && top_ == "outputs") {
        second_ = key;
      } else if (depth == 3 && inParameters() &&
                 std::find(names_.begin(), names_.end(), key) == names_.end()) {
        names_.push_back(key);
      }
    } else if (event == Json::parse_event_t::object_start && depth == 2 && inParameters()) {
      names_.clear();  // a repeated "parameters": the last one counts
    }
    return true;
  }

 private:
  bool inParameters() const { return top_ == "outputs" && second_ == "parameters"; }
  std::vector<std::string>& names_;
  std::string top_, second_;
};

}  // namespace

std::string_view phaseName(Phase phase) {
  switch (phase) {
    case Phase::kSucceeded: return "Succeeded";
    case Phase::kFailed: return "Failed";
    case Phase::kError: return "Error";
    case Phase::kRunning: return "Running";
    case Phase::kNotHandled: return "NotHandled";
  }
  return "Error";
}

Json Outcome::toJson() const {
  Json j = {{"phase", phaseName(phase)}, {"message", message}, {"outputs", outputs}};
  if (requeue) j["requeue_ms"] = requeue->count();
  return j;
}

Outcome parseOutcome(std::string_view result_json, std::string_view plugin) {
  const auto invalid = [plugin](const std::string& what) {
    return Outcome::error("plugin '" + std::string(plugin) + "' returned an invalid result: " + what);
  };
  // Only a result that may have parameters pays for noting their order.
  std::vector<std::string> order;
  Json j = result_json.find("\"parameters\"") == std::string_view::npos
               ? Json::parse(result_json, nullptr, /*allow_exceptions=*/false)
               : Json::parse(result_json, ParameterOrder(order), /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return invalid("not a JSON object");
  auto phase_it = j.find("phase");
  if (phase_it == j.end() || !phase_it->is_string()) return invalid("no 'phase'");
  auto phase = phaseFromName(phase_it->get_ref<const std::string&>());
  if (!phase) return invalid("unknown phase '" + phase_it->get<std::string>() + "'");

  Outcome out;
  out.phase = *phase;
  if (auto m = j.find("message"); m != j.end()) {
    if (!m->is_string()) return invalid("'message' is not a string");
    out.message = std::move(m->get_ref<std::string&>());
  }
  if (auto o = j.find("outputs"); o != j.end()) {
    if (!o->is_object()) return invalid("'outputs' is not an object");
    if (auto p = o->find("parameters"); p != o->end()) {
      if (!p->is_object()) return invalid("'outputs.parameters' is not an object");
      for (const auto& [name, value] : p->items()) {
        if (!value.is_string()) {
          return invalid("output parameter '" + name + "' is not a string");
        }
      }
    }
    out.outputs = std::move(*o);
    if (auto p = out.outputs.find("parameters");
        p != out.outputs.end() && p->size() > 1 && p->size() == order.size()) {
      out.parameter_order = std::move(order);
    }
  }
  if (auto r = j.find("requeue_ms"); r != j.end()) {
    if (!r->is_number_integer() || r->get<long long>() < 0) {
      return invalid("'requeue_ms' is not a non-negative integer");
    }
    out.requeue = std::chrono::milliseconds(r->get<long long>());
  }
  return out;
}

}  // namespace plugboard::core

#include "core/launch/outcome.h"

namespace plugboard::core {
namespace {

std::optional<Phase> phaseFromName(std::string_view name) {
  if (name == "Succeeded") return Phase::kSucceeded;
  if (name == "Failed") return Phase::kFailed;
  if (name == "Error") return Phase::kError;
  if (name == "Running") return Phase::kRunning;
  if (name == "Pending") return Phase::kPending;
  if (name == "NotHandled") return Phase::kNotHandled;
  return std::nullopt;
}

}  // namespace

std::string_view phaseName(Phase phase) {
  switch (phase) {
    case Phase::kSucceeded: return "Succeeded";
    case Phase::kFailed: return "Failed";
    case Phase::kError: return "Error";
    case Phase::kRunning: return "Running";
    case Phase::kPending: return "Pending";
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
  Json j = Json::parse(result_json, nullptr, /*allow_exceptions=*/false);
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

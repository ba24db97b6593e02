#include "core/launch/outcome.h"

#include <unordered_set>

#include <plugboard/host/json_text.h>

#include "core/base/duration.h"

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

// The names of outputs.parameters in the order the plugin wrote them, read from a result
// already parsed as valid JSON by one pass over its bytes that builds nothing (a second
// JSON parse cost as much as the first). Where "parameters" repeats, the last one counts,
// as when the result is parsed into a value. Empty when a name holds an escape (Argo's
// parameter names never do): the caller then keeps the object's order.
std::vector<std::string> parameterOrder(std::string_view text) {
  std::vector<std::string> names;
  std::unordered_set<std::string_view> seen;  // names' text, to keep each name once
  std::string_view top, second;  // the current key at depth 1 (the result) and 2 (outputs)
  char open[3] = {};             // the first three open containers: '{' or '['
  std::size_t depth = 0;
  bool expect_key = false;
  const auto inParameters = [&] {
    return top == "outputs" && second == "parameters" && open[0] == '{' && open[1] == '{';
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      std::size_t end = i + 1;
      bool escaped = false;
      while (end < text.size() && text[end] != '"') {
        if (text[end] == '\\') {
          escaped = true;
          ++end;
        }
        ++end;
      }
      if (expect_key) {
        const std::string_view key = text.substr(i + 1, end - i - 1);
        if (depth == 1) {
          top = key;
        } else if (depth == 2) {
          second = key;
        } else if (depth == 3 && inParameters() && open[2] == '{') {
          if (escaped) return {};
          if (seen.insert(key).second) names.emplace_back(key);
        }
        expect_key = false;
      }
      i = end;
    } else if (c == '{' || c == '[') {
      if (c == '{' && depth == 2 && inParameters()) {
        names.clear();
        seen.clear();
      }
      if (depth < 3) open[depth] = c;
      ++depth;
      expect_key = c == '{';
    } else if (c == '}' || c == ']') {
      --depth;
      expect_key = false;
    } else if (c == ',') {
      expect_key = depth > 0 && depth <= 3 ? open[depth - 1] == '{' : false;
    }
  }
  return names;
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
  if (host::holdsNul(result_json)) return invalid(std::string("it ") + host::kNulText);
  if (host::jsonDeeperThan(result_json)) return invalid(host::tooDeepText());
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
    // The object sorts its names; only a result with two or more pays for reading the
    // plugin's order.
    if (auto p = out.outputs.find("parameters"); p != out.outputs.end() && p->size() > 1) {
      std::vector<std::string> order = parameterOrder(result_json);
      if (order.size() == p->size()) out.parameter_order = std::move(order);
    }
  }
  if (auto r = j.find("requeue_ms"); r != j.end()) {
    if (!r->is_number_integer() || r->get<long long>() < 0) {
      return invalid("'requeue_ms' is not a non-negative integer");
    }
    if (r->get<long long>() > kMaxDuration.count()) {
      return invalid("'requeue_ms' is longer than 100 years");
    }
    out.requeue = std::chrono::milliseconds(r->get<long long>());
  }
  return out;
}

}  // namespace plugboard::core

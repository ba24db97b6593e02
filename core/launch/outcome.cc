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

// Reads the names of outputs.parameters, in the order the plugin wrote them, from a
// result already known to be valid JSON; builds no values. Where "parameters" repeats, the
// last one counts, as when the result is parsed into a value.
class ParameterOrder : public Json::json_sax_t {
 public:
  explicit ParameterOrder(std::vector<std::string>& names) : names_(names) {}

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    if (depth_ == 2 && inParameters()) names_.clear();
    ++depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    ++depth_;
    return true;
  }
  bool end_object() override { return --depth_, true; }
  bool end_array() override { return --depth_, true; }
  bool key(string_t& k) override {
    if (depth_ == 1) {
      top_ = k;
    } else if (depth_ == 2 && top_ == "outputs") {
      second_ = k;
    } else if (depth_ == 3 && inParameters() &&
               std::find(names_.begin(), names_.end(), k) == names_.end()) {
      names_.push_back(k);
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  bool inParameters() const { return top_ == "outputs" && second_ == "parameters"; }
  std::vector<std::string>& names_;
  int depth_ = 0;  // objects and arrays open around the current token
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
    // The object sorts its names; only a result with two or more pays for a second pass
    // that reads the plugin's order, without building values.
    if (auto p = out.outputs.find("parameters"); p != out.outputs.end() && p->size() > 1) {
      std::vector<std::string> order;
      ParameterOrder reader(order);
      if (Json::sax_parse(result_json, &reader) && order.size() == p->size())
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

#include "core/workflows/run_report.h"

#include <algorithm>

#include "core/base/text.h"

namespace plugboard::core {

std::string_view stepPhaseName(StepPhase phase) {
  switch (phase) {
    case StepPhase::kPending:
      return "Pending";
    case StepPhase::kRunning:
      return "Running";
    case StepPhase::kSucceeded:
      return "Succeeded";
    case StepPhase::kFailed:
      return "Failed";
    case StepPhase::kError:
      return "Error";
    case StepPhase::kSkipped:
      return "Skipped";
    case StepPhase::kCancelled:
      return "Cancelled";
  }
  return "Error";
}

bool isTerminal(StepPhase phase) {
  return phase != StepPhase::kPending && phase != StepPhase::kRunning;
}

Millis StepStatus::elapsed(std::chrono::steady_clock::time_point now) const {
  if (!started) return Millis(0);
  return std::chrono::duration_cast<Millis>((finished ? *finished : now) - *started);
}

void StepOutputs::set(std::vector<std::pair<std::string, Json>> pairs) {
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<std::string, Json>> kept;
  kept.reserve(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (i + 1 < pairs.size() && pairs[i + 1].first == pairs[i].first) continue;
    kept.push_back(std::move(pairs[i]));
  }
  parameters = std::move(kept);
}

Json StepOutputs::toJson() const {
  if (!parameters) return Json::object();
  Json list = Json::object();
  for (const auto& [name, value] : *parameters) list[name] = value;
  return {{"parameters", std::move(list)}};
}

Json StepStatus::toJson() const {
  return {{"id", id},
          {"phase", stepPhaseName(phase)},
          {"message", message},
          {"outputs", outputs.toJson()},
          {"attempts", attempts},
          {"calls", calls},
          {"plugin", plugin},
          {"deployer", deployer},
          {"logs", logs.toJson()},
          {"logs_dropped", logs.dropped()},
          {"duration_ms", elapsed().count()}};
}

bool RunReport::succeeded() const {
  if (!phase.empty()) return !cancelled && phase == "Succeeded";
  return !cancelled && std::all_of(steps.begin(), steps.end(), [](const StepStatus& s) {
    return s.phase == StepPhase::kSucceeded;
  });
}

Json RunReport::toJson() const {
  Json steps_json = Json::array();
  for (const auto& s : steps) steps_json.push_back(s.toJson());
  return {{"workflow", workflow},         {"succeeded", succeeded()},
          {"cancelled", cancelled},       {"duration_ms", duration.count()},
          {"abandoned_calls", abandoned}, {"steps", steps_json}, {"outputs", outputs}};
}

namespace {

std::string quoted(const std::string& text) {
  std::string out;
  appendJsonString(out, text);
  return out;
}

// Appends `value` as dump(2) writes it `depth` levels deep.
void appendNested(std::string& out, const Json& value, int depth) {
  const bool object = value.is_object();
  if (!value.is_structured() || value.empty()) {
    if (value.is_string()) {
      appendJsonString(out, value.get_ref<const std::string&>());
    } else {
      out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
    }
    return;
  }
  const std::string indent(2 * depth + 2, ' ');
  out += object ? "{\n" : "[\n";
  bool first = true;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (!first) out += ",\n";
    first = false;
    out += indent;
    if (object) {
      appendJsonString(out, it.key());
      out += ": ";
    }
    appendNested(out, *it, depth + 1);
  }
  out += "\n" + std::string(2 * depth, ' ') + (object ? "}" : "]");
}

}  // namespace

void RunReport::writeJson(std::FILE* out) const {
  writeJson(out, steps.size(), [&](std::size_t i) -> const StepStatus& { return steps[i]; });
}

void RunReport::writeJson(std::FILE* out, std::size_t count,
                          const std::function<const StepStatus&(std::size_t)>& step) const {
  // Members in nlohmann's order (sorted by name), as toJson().dump(2) writes them.
  std::string text = "{\n  \"abandoned_calls\": " + std::to_string(abandoned) +
                     ",\n  \"cancelled\": " + (cancelled ? "true" : "false") +
                     ",\n  \"duration_ms\": " + std::to_string(duration.count()) +
                     ",\n  \"outputs\": ";
  appendNested(text, outputs, 1);
  text += std::string(",\n  \"steps\": ") + (count == 0 ? "[]" : "[");
  const auto now = std::chrono::steady_clock::now();
  bool all_succeeded = true;
  for (std::size_t i = 0; i < count; ++i) {
    const StepStatus& s = step(i);
    all_succeeded = all_succeeded && s.phase == StepPhase::kSucceeded;
    text += i == 0 ? "\n    {\n" : ",\n    {\n";
    text += "      \"attempts\": " + std::to_string(s.attempts) + ",\n";
    text += "      \"calls\": " + std::to_string(s.calls) + ",\n";
    text += "      \"deployer\": " + quoted(s.deployer) + ",\n";
    text += "      \"duration_ms\": " + std::to_string(s.elapsed(now).count()) + ",\n";
    text += "      \"id\": " + quoted(s.id) + ",\n";
    text += "      \"logs\": ";
    appendNested(text, s.logs.toJson(), 3);
    text += ",\n      \"logs_dropped\": " + std::to_string(s.logs.dropped()) + ",\n";
    text += "      \"message\": " + quoted(s.message) + ",\n";
    text += "      \"outputs\": ";
    appendNested(text, s.outputs.toJson(), 3);
    text += ",\n";
    text += "      \"phase\": \"" + std::string(stepPhaseName(s.phase)) + "\",\n";
    text += "      \"plugin\": " + quoted(s.plugin) + "\n    }";
    std::fwrite(text.data(), 1, text.size(), out);
    text.clear();
  }
  const bool succeeded = !cancelled && (phase.empty() ? all_succeeded : phase == "Succeeded");
  if (count != 0) text += "\n  ]";
  text += std::string(",\n  \"succeeded\": ") + (succeeded ? "true" : "false") +
          ",\n  \"workflow\": " + quoted(workflow) + "\n}";
  std::fwrite(text.data(), 1, text.size(), out);
}

}  // namespace plugboard::core

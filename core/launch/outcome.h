// core/launch/outcome.h: the result of one plugin call, as the runtime understands it.
//
// Plugins answer with result JSON (see docs/plugin-authoring.md, "Results");
// parseOutcome() validates it so that a plugin's mistake becomes an Error outcome naming
// the plugin, never a crash or a silent success. Value type.
#ifndef PLUGBOARD_CORE_LAUNCH_OUTCOME_H_
#define PLUGBOARD_CORE_LAUNCH_OUTCOME_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace plugboard::core {

using Json = nlohmann::json;

// kPending: accepted but not started yet (e.g. queued elsewhere); like Running, it is
// requeued.
enum class Phase { kSucceeded, kFailed, kError, kRunning, kPending, kNotHandled };

std::string_view phaseName(Phase phase);

struct Outcome {
  Phase phase = Phase::kError;
  std::string message;
  Json outputs = Json::object();  // "parameters" maps names to strings
  std::optional<std::chrono::milliseconds> requeue;
  // The names of outputs.parameters in the order the plugin wrote them, when it wrote two
  // or more (the Json object itself keeps them sorted by name).
  std::vector<std::string> parameter_order{};

  static Outcome error(std::string message) { return {Phase::kError, std::move(message), Json::object(), {}}; }
  Json toJson() const;
};

// Parses a plugin's result. `plugin` names the plugin in error messages.
Outcome parseOutcome(std::string_view result_json, std::string_view plugin);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_LAUNCH_OUTCOME_H_

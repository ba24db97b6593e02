// core/base/toml_json.h: TOML values as JSON values, for the files plugboard reads in TOML
// (workflows, registries) whose values travel on as JSON. Dates and times become their
// TOML text. Thread-safe.
#ifndef PLUGBOARD_CORE_BASE_TOML_JSON_H_
#define PLUGBOARD_CORE_BASE_TOML_JSON_H_

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

namespace plugboard::core {

nlohmann::json tomlToJson(const toml::node& node);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_BASE_TOML_JSON_H_

#include "core/base/toml_json.h"

#include <sstream>

namespace plugboard::core {

nlohmann::json tomlToJson(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: {
      nlohmann::json out = nlohmann::json::object();
      for (auto&& [k, v] : *node.as_table()) out[std::string(k.str())] = tomlToJson(v);
      return out;
    }
    case toml::node_type::array: {
      nlohmann::json out = nlohmann::json::array();
      for (auto&& v : *node.as_array()) out.push_back(tomlToJson(v));
      return out;
    }
    case toml::node_type::string: return node.as_string()->get();
    case toml::node_type::integer: return node.as_integer()->get();
    case toml::node_type::floating_point: return node.as_floating_point()->get();
    case toml::node_type::boolean: return node.as_boolean()->get();
    default: {
      std::ostringstream text;
      node.visit([&](auto&& v) { text << v; });
      return text.str();
    }
  }
}

}  // namespace plugboard::core

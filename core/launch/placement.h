// core/launch/placement.h: a choice of deployer for a plugin, as the configuration's [deploy]
// section or a workflow step's `deploy =` states it. Value type.
#ifndef PLUGBOARD_CORE_LAUNCH_PLACEMENT_H_
#define PLUGBOARD_CORE_LAUNCH_PLACEMENT_H_

#include <string>

#include <nlohmann/json.hpp>

namespace plugboard::core {

struct Placement {
  std::string deployer;                               // by name
  nlohmann::json options = nlohmann::json::object();  // checked against its manifest
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_LAUNCH_PLACEMENT_H_

// core/manifests/manifest.h: a plugin's identity, as declared in its `.plugboard` section.
//
// The manifest is compact JSON written by the SDK's registration macro; see
// docs/plugin-authoring.md for every member. parseManifest() checks types and values and
// reports the first problem with the member's name. Unknown members are ignored so that
// newer SDKs can add optional members without breaking older runtimes. Value type.
#ifndef PLUGBOARD_CORE_MANIFESTS_MANIFEST_H_
#define PLUGBOARD_CORE_MANIFESTS_MANIFEST_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/expected.h"
#include "core/manifests/version.h"

namespace plugboard::core {

using Json = nlohmann::json;

enum class Concurrency { kParallel, kSerial };

struct Manifest {
  std::string kind;  // "executor" or "deployer"
  std::string name;
  Version version;
  int abi = 0;
  std::vector<std::string> provides;  // empty: a legacy plugin, polled for every RPC
  std::vector<std::string> aliases;
  Concurrency concurrency = Concurrency::kParallel;
  Json schemas = Json::object();  // RPC -> {"input": JSON Schema subset}
  std::string description;
  // Whether a poll (a template that named a key no plugin has) may call it: true or false
  // as the manifest's "polled" says; unset (plugins built before the member existed) it
  // is polled and may decline itself. The dispatcher applies it (core/routing/route.h).
  std::optional<bool> polled;
  // Deployers only: the artifact kinds deployed ("native", "python" ...), the keys they
  // accept ({"memory":{"type":"size","description":"..."}}; see docs/deployers.md), and
  // their place in the default order (higher first), and whether they run plugins inside
  // the runtime's own process ("in_process": a plugin that crashes takes it down).
  std::vector<std::string> deploys;
  Json config = Json::object();
  int priority = 0;
  bool in_process = false;
  std::string text;  // the manifest as read, for display and comparison

  bool legacy() const { return provides.empty(); }
  bool providesRpc(std::string_view rpc) const;
  Json toJson() const;  // the parsed members, normalised
};

// Parses and validates manifest text. Does not check the ABI version; the catalog does.
Expected<Manifest> parseManifest(std::string_view text);

// Whether two manifests say the same, compared as JSON values (member order and spacing
// aside): the check that a loaded or started plugin is the file that was read.
bool sameManifest(const Manifest& a, const Manifest& b);

// The types a deployer's config key may declare.
bool isConfigType(std::string_view type);

// True for names of the form [A-Za-z0-9][A-Za-z0-9._-]* up to 128 characters.
bool isValidPluginName(std::string_view name);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_MANIFESTS_MANIFEST_H_

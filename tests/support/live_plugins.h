// tests/support/live_plugins.h: asking a running `plugboard serve` what it serves, and
// waiting for a change of its plugin directories to show.
#ifndef PLUGBOARD_TESTS_SUPPORT_LIVE_PLUGINS_H_
#define PLUGBOARD_TESTS_SUPPORT_LIVE_PLUGINS_H_

#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/eventually.h"
#include "tests/support/server_process.h"

namespace plugboard::testing {

// GET /api/v1/plugins.
inline nlohmann::json pluginList(HttpClient& client) {
  return nlohmann::json::parse(client.request("GET", "/api/v1/plugins").body, nullptr, false);
}

// The name@version that answers a direct call of `plugin`, or "" when none does.
inline std::string answering(HttpClient& client, const std::string& plugin) {
  auto r =
      client.request("POST", "/api/v1/plugins/" + plugin + "/template.execute", R"({"name":"x"})");
  if (r.status != 200) return "";
  const auto reply = nlohmann::json::parse(r.body, nullptr, false);
  return reply.is_object() && reply.value("phase", "") == "Succeeded" ? reply.value("plugin", "")
                                                                      : "";
}

// Waits for `plugin` to be answered by `label` ("" for none).
inline bool waitFor(HttpClient& client, const std::string& plugin, const std::string& label) {
  return eventually([&] { return answering(client, plugin) == label; });
}

// Whether the plugin list has an entry whose "error" contains `text`.
inline bool listsError(HttpClient& client, const std::string& text) {
  const auto list = pluginList(client);
  if (!list.is_object()) return false;
  for (const auto& p : list["plugins"]) {
    if (p.value("error", "").find(text) != std::string::npos) return true;
  }
  return false;
}

// Waits for the plugin list to hold an entry whose "error" contains `text`.
inline bool waitForError(HttpClient& client, const std::string& text) {
  return eventually([&] { return listsError(client, text); });
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_LIVE_PLUGINS_H_

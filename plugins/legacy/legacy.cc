// legacy-executor-plugin: the shape of an old Argo executor plugin. It declares no
// "provides", so the runtime polls it for every RPC, and it handles only templates whose
// args carry its marker ({"legacy": {...}}), declining everything else.
#include <plugboard/sdk.hpp>

namespace {

class Legacy : public plugboard::Plugin {
 public:
  // Old Argo plugins are asked about every template; this one checks its args.
  plugboard::Result execute(const plugboard::Request& request) override {
    const auto& args = request.args();
    if (!args.is_object() || !args.contains("legacy")) return plugboard::Result::NotHandled();
    return plugboard::Result::Succeeded(
        {{"handled_by", "legacy-executor-plugin"}, {"key", request.key()}, {"via", request.via()}},
        "handled by the legacy plugin");
  }
};

}  // namespace

PLUGBOARD_PLUGIN(Legacy, R"({
  "name": "legacy-executor-plugin",
  "version": "0.9.0",
  "polled": true,
  "description": "An old-style plugin: no provides; handles only args carrying 'legacy'"
})")

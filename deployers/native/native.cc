// native: runs a plugin .so inside the runtime's process.
//
// The fastest way to call a plugin, and the one with no protection: a plugin that crashes
// takes the runtime down with it, and one that leaks or corrupts memory does so in the
// runtime. Use the `process` deployer for plugins you do not trust that far.
//
// Artifact: {"path": "/abs/plugin.so"}. Options: "config", handed to the plugin's setUp().
#include <memory>
#include <stdexcept>
#include <string>

#include <plugboard/deployer.hpp>

#include "core/loader.h"

namespace {

class NativeHandle : public plugboard::Handle {
 public:
  explicit NativeHandle(std::unique_ptr<plugboard::core::PluginInstance> instance) : instance_(std::move(instance)) {}
  std::string execute(std::uint64_t call_id, std::string_view request) override {
    return instance_->callRaw(request, call_id);
  }
  void cancel(std::uint64_t call_id) override { instance_->cancel(call_id); }

 private:
  std::unique_ptr<plugboard::core::PluginInstance> instance_;
};

class NativeDeployer : public plugboard::Deployer {
 public:
  plugboard::Deployed open(const plugboard::Json& artifact, const plugboard::Json& options) override {
    const std::string path = artifact.value("path", "");
    if (path.empty()) throw std::invalid_argument("the artifact has no 'path' to a plugin .so");
    auto library = plugboard::core::PluginLibrary::load(path);
    if (!library) throw std::runtime_error(library.error().message());
    auto instance = (*library)->createInstance(options.value("config", plugboard::Json::object()));
    if (!instance) throw std::runtime_error(instance.error().message());
    return {plugboard::Json::parse((*library)->manifest().text), std::make_unique<NativeHandle>(std::move(*instance))};
  }
};

}  // namespace

PLUGBOARD_DEPLOYER(NativeDeployer, R"({
  "name": "native", "version": "1.0.0", "deploys": ["native"], "priority": 100,
  "description": "Loads a plugin .so into the runtime's own process: fastest, and no protection from a plugin that crashes",
  "config": {"config": {"type": "object", "description": "configuration handed to the plugin's setUp"}}
})")

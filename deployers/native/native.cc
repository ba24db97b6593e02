// native: runs a plugin .so inside the runtime's process.
//
// The fastest way to call a plugin, and the one with no protection: a plugin that crashes
// takes the runtime down with it, and one that leaks or corrupts memory does so in the
// runtime. Use the `process` deployer for plugins you do not trust that far.
//
// Artifact: {"path": "/abs/plugin.so"}. Options: "config", handed to the plugin's setUp().
// The plugin is loaded through the host kit (plugboard/host/native.h); its log lines go to
// the runtime's log through this deployer's, tagged with the plugin's name.
#include <memory>
#include <stdexcept>
#include <string>

#include <plugboard/host/native.h>
#include <plugboard/deployer.hpp>

namespace {

class NativeHandle : public plugboard::Handle {
 public:
  explicit NativeHandle(std::unique_ptr<plugboard::host::NativeInstance> instance)
      : instance_(std::move(instance)) {}
  std::string execute(std::uint64_t call_id, std::string_view request) override {
    return instance_->execute(call_id, request);
  }
  void cancel(std::uint64_t call_id) override { instance_->cancel(call_id); }

 private:
  std::unique_ptr<plugboard::host::NativeInstance> instance_;
};

class NativeDeployer : public plugboard::Deployer {
 public:
  plugboard::Deployed open(const plugboard::Json& artifact,
                           const plugboard::Json& options) override {
    const std::string path = artifact.value("path", "");
    if (path.empty()) throw std::invalid_argument("the artifact has no 'path' to a plugin .so");
    auto library = plugboard::host::NativeLibrary::load(path);
    if (!library) throw std::runtime_error(library.error().message());
    const std::string config = options.value("config", plugboard::Json::object()).dump();
    auto instance = (*library)->createInstance(
        config, [log = log(), name = (*library)->name()](int level, std::string_view message) {
          const std::string line = "[" + name + "] " + std::string(message);
          if (level <= PLUGBOARD_LOG_DEBUG) {
            log.debug(line);
          } else if (level == PLUGBOARD_LOG_INFO) {
            log.info(line);
          } else if (level == PLUGBOARD_LOG_WARN) {
            log.warn(line);
          } else {
            log.error(line);
          }
        });
    if (!instance) throw std::runtime_error(instance.error().message());
    return {plugboard::Json::parse((*library)->manifestText()),
            std::make_unique<NativeHandle>(std::move(*instance))};
  }
};

}  // namespace

PLUGBOARD_DEPLOYER(NativeDeployer, R"({
  "name": "native", "version": "1.0.0", "deploys": ["native"], "priority": 100,
  "description": "Loads a plugin .so into the runtime's own process: fastest, and no protection from a plugin that crashes",
  "config": {"config": {"type": "object", "description": "configuration handed to the plugin's setUp"}}
})")

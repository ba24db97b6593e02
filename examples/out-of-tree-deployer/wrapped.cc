// wrapped: a deployer of a new artifact kind, "wrapped", written outside the plugboard
// tree with the SDK and the host kit (docs/deployers.md).
//
// A "wrapped" artifact names a native plugin .so: {"path": "/abs/plugin.so"} (a registry
// entry `wrapped = "plugin.so"`). The deployer loads it into the runtime's process with
// the kit's loader, hands it the step's option "config", tags the plugin's log lines with
// its name, and counts the calls it forwards in the debug log.
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>

#include <plugboard/host/native.h>
#include <plugboard/deployer.hpp>

namespace {

class WrappedHandle : public plugboard::Handle {
 public:
  WrappedHandle(std::unique_ptr<plugboard::host::NativeInstance> instance, plugboard::Logger log)
      : instance_(std::move(instance)), log_(log) {}

  std::string execute(std::uint64_t call_id, std::string_view request) override {
    log_.debug("call " + std::to_string(++calls_) + " to " + instance_->library().name());
    return instance_->execute(call_id, request);
  }
  void cancel(std::uint64_t call_id) override { instance_->cancel(call_id); }

 private:
  std::unique_ptr<plugboard::host::NativeInstance> instance_;
  plugboard::Logger log_;
  std::atomic<unsigned> calls_{0};
};

class WrappedDeployer : public plugboard::Deployer {
 public:
  plugboard::Deployed open(const plugboard::Json& artifact,
                           const plugboard::Json& options) override {
    const std::string path = artifact.value("path", "");
    if (path.empty()) throw std::invalid_argument("the 'wrapped' artifact has no 'path'");
    auto library = plugboard::host::NativeLibrary::load(path);
    if (!library) throw std::runtime_error(library.error().message());
    const std::string name = (*library)->name();
    auto instance = (*library)->createInstance(
        options.value("config", plugboard::Json::object()).dump(),
        [log = log(), name](int level, std::string_view message) {
          const std::string line = "[" + name + "] " + std::string(message);
          level >= PLUGBOARD_LOG_WARN ? log.warn(line) : log.info(line);
        });
    if (!instance) throw std::runtime_error(instance.error().message());
    return {plugboard::Json::parse((*library)->manifestText()),
            std::make_unique<WrappedHandle>(std::move(*instance), log())};
  }
};

}  // namespace

PLUGBOARD_DEPLOYER(WrappedDeployer, R"({
  "name": "wrapped", "version": "0.1.0", "deploys": ["wrapped"],
  "description": "Runs a native plugin .so named by a 'wrapped' artifact inside the runtime",
  "config": {"config": {"type": "object", "description": "configuration handed to the plugin's setUp"}}
})")

#include "plugboard/host/native.h"

#include <optional>
#include <system_error>

#include <nlohmann/json.hpp>

namespace plugboard::host {
namespace fs = std::filesystem;

Expected<std::shared_ptr<NativeLibrary>> NativeLibrary::load(const fs::path& file,
                                                             const std::string& name) {
  std::error_code ec;
  const fs::path path = fs::absolute(file, ec);
  const std::string who =
      (name.empty() ? std::string("plugin") : "plugin '" + name + "'") + " (" + path.string() + ")";
  auto module = loadModule<plugboard_plugin_api>(path, who, kPluginModule);
  if (!module) return module.error();
  const plugboard_plugin_api* api = module->api;
  if (api->create == nullptr || api->execute == nullptr || api->cancel == nullptr ||
      api->destroy == nullptr) {
    return Error(who + ": API table has a null entry");
  }
  std::shared_ptr<NativeLibrary> lib(new NativeLibrary());
  lib->module_ = std::move(*module);
  lib->file_ = path;
  lib->name_ = name;
  if (lib->name_.empty()) {
    const auto manifest = nlohmann::json::parse(lib->manifestText(), nullptr, false);
    lib->name_ = manifest.is_object() ? manifest.value("name", "?") : "?";
  }
  return lib;
}

Expected<std::unique_ptr<NativeInstance>> NativeLibrary::createInstance(
    std::string_view config_json, LogFn log) {
  auto services = std::make_unique<HostServices>(std::move(log));
  std::optional<std::string> error;
  void* handle = module_.api->create(services->abi(), config_json.data(), config_json.size(),
                                     &collectText, &error);
  if (handle == nullptr) {
    return Error("plugin '" + name_ + "' refused to start: " + errorMessage(error));
  }
  std::unique_ptr<NativeInstance> instance(
      new NativeInstance(shared_from_this(), std::move(services)));
  instance->handle_ = handle;
  return instance;
}

NativeInstance::NativeInstance(std::shared_ptr<NativeLibrary> library,
                               std::unique_ptr<HostServices> services)
    : library_(std::move(library)), services_(std::move(services)) {}

NativeInstance::~NativeInstance() {
  if (handle_ != nullptr) library_->module_.api->destroy(handle_);
}

void NativeInstance::execute(std::uint64_t call_id, std::string_view request_json,
                             plugboard_respond_fn respond, void* respond_ctx) {
  library_->module_.api->execute(handle_, call_id, request_json.data(), request_json.size(),
                                 respond, respond_ctx);
}

std::string NativeInstance::execute(std::uint64_t call_id, std::string_view request_json) {
  std::optional<std::string> result;
  execute(call_id, request_json, &collectText, &result);
  return result ? std::move(*result) : std::string();
}

void NativeInstance::cancel(std::uint64_t call_id) {
  library_->module_.api->cancel(handle_, call_id);
}

}  // namespace plugboard::host

#include "core/loader.h"

#include <cstddef>
#include <string_view>

#include <spdlog/spdlog.h>

#include "core/module.h"

namespace plugboard::core {
namespace fs = std::filesystem;
namespace {

// The bytes an ABI 1.0 table must have: everything up to and including destroy.
constexpr std::size_t kMinApiSize = offsetof(plugboard_plugin_api, destroy) + sizeof(void*);

}  // namespace

std::string detail::dlerrorText(const std::exception& e) {
  std::string_view what = e.what();
  constexpr std::string_view kMarker = "dlerror system message: ";
  if (auto pos = what.find(kMarker); pos != std::string_view::npos) {
    what.remove_prefix(pos + kMarker.size());
    if (what.ends_with(")")) what.remove_suffix(1);
  }
  return std::string(what);
}

detail::ModuleHost::ModuleHost(std::string module_name) : name(std::move(module_name)) {
  abi.struct_size = sizeof(plugboard_host);
  abi.ctx = this;
  abi.log = [](void* ctx, int level, const char* message, size_t len) {
    auto* host = static_cast<ModuleHost*>(ctx);
    auto spd = level <= PLUGBOARD_LOG_DEBUG  ? spdlog::level::debug
               : level == PLUGBOARD_LOG_INFO ? spdlog::level::info
               : level == PLUGBOARD_LOG_WARN ? spdlog::level::warn
                                             : spdlog::level::err;
    spdlog::log(spd, "[{}] {}", host->name, std::string_view(message, len));
  };
}

void detail::collectText(void* ctx, const char* json, size_t len) {
  static_cast<std::optional<std::string>*>(ctx)->emplace(json, len);
}

struct PluginInstance::Host : detail::ModuleHost {
  using ModuleHost::ModuleHost;
};

Expected<std::shared_ptr<PluginLibrary>> PluginLibrary::load(const fs::path& file,
                                                             const Manifest* expected) {
  std::error_code ec;
  const fs::path path = fs::absolute(file, ec);
  Manifest from_file;
  if (expected == nullptr) {
    auto entry = readPluginFile(path);
    if (!entry) return Error(path.string() + ": " + entry.error().message());
    from_file = std::move(entry->manifest);
    expected = &from_file;
  }
  const std::string who = "plugin '" + expected->name + "' (" + path.string() + ")";

  std::shared_ptr<PluginLibrary> lib(new PluginLibrary());
  lib->file_ = path;
  auto module = detail::loadModule<plugboard_plugin_api>(path, *expected, who, PLUGBOARD_ENTRY_ALIAS_NAME,
                                                         "PLUGBOARD_PLUGIN", kMinApiSize);
  if (!module) return module.error();
  const plugboard_plugin_api* api = module->api;
  if (api->create == nullptr || api->execute == nullptr || api->cancel == nullptr || api->destroy == nullptr) {
    return Error(who + ": API table has a null entry");
  }
  lib->entry_ = std::move(module->entry);
  lib->api_ = api;
  lib->manifest_ = std::move(module->manifest);
  return lib;
}

std::string PluginLibrary::abiVersion() const {
  return std::to_string(api_->abi_major) + "." + std::to_string(api_->abi_minor);
}

Expected<std::unique_ptr<PluginInstance>> PluginLibrary::createInstance(const Json& config) {
  auto host = std::make_unique<PluginInstance::Host>(manifest_.name);
  const std::string text = config.dump();
  std::optional<std::string> error;
  void* handle = api_->create(&host->abi, text.data(), text.size(), &detail::collectText, &error);
  if (handle == nullptr) {
    std::string why = "no reason given";
    if (error) why = parseOutcome(*error, manifest_.name).message;
    return Error("plugin '" + manifest_.name + "' refused to start: " + why);
  }
  std::unique_ptr<PluginInstance> instance(new PluginInstance(shared_from_this(), std::move(host)));
  instance->handle_ = handle;
  return instance;
}

PluginInstance::PluginInstance(std::shared_ptr<PluginLibrary> library, std::unique_ptr<Host> host)
    : library_(std::move(library)), host_(std::move(host)) {}

PluginInstance::~PluginInstance() {
  if (handle_ != nullptr) library_->api_->destroy(handle_);
}

Outcome PluginInstance::call(const Json& request, std::uint64_t call_id) {
  return callText(request.dump(-1, ' ', false, Json::error_handler_t::replace), call_id);
}

Outcome PluginInstance::callText(std::string_view request, std::uint64_t call_id) {
  // The result is parsed straight from the plugin's buffer, inside the callback.
  struct Response {
    std::optional<Outcome> outcome;
    const std::string* plugin;
  } response{std::nullopt, &library_->manifest_.name};
  auto parse = [](void* ctx, const char* json, size_t len) {
    auto* r = static_cast<Response*>(ctx);
    r->outcome = parseOutcome(std::string_view(json, len), *r->plugin);
  };
  library_->api_->execute(handle_, call_id, request.data(), request.size(), parse, &response);
  if (!response.outcome) {
    return Outcome::error("plugin '" + manifest().name + "' returned without a result");
  }
  return std::move(*response.outcome);
}

std::string PluginInstance::callRaw(std::string_view request, std::uint64_t call_id) {
  std::optional<std::string> result;
  library_->api_->execute(handle_, call_id, request.data(), request.size(), &detail::collectText, &result);
  return result ? std::move(*result) : std::string();
}

void PluginInstance::cancel(std::uint64_t call_id) { library_->api_->cancel(handle_, call_id); }

}  // namespace plugboard::core

#include "core/loader.h"

#include <cstddef>
#include <string_view>

#include <boost/dll/import.hpp>
#include <boost/dll/shared_library.hpp>
#include <spdlog/spdlog.h>

namespace plugboard::core {
namespace fs = std::filesystem;
namespace {

// The bytes an ABI 1.0 table must have: everything up to and including destroy.
constexpr std::size_t kMinApiSize = offsetof(plugboard_plugin_api, destroy) + sizeof(void*);

std::string dlerrorText(const std::exception& e) {
  std::string_view what = e.what();
  constexpr std::string_view kMarker = "dlerror system message: ";
  if (auto pos = what.find(kMarker); pos != std::string_view::npos) {
    what.remove_prefix(pos + kMarker.size());
    if (what.ends_with(")")) what.remove_suffix(1);
  }
  return std::string(what);
}

void collect(void* ctx, const char* json, size_t len) {
  auto* out = static_cast<std::optional<std::string>*>(ctx);
  out->emplace(json, len);
}

}  // namespace

struct PluginInstance::Host {
  plugboard_host abi{};
  std::string plugin;

  static void log(void* ctx, int level, const char* message, size_t len) {
    auto* host = static_cast<Host*>(ctx);
    auto spd = level <= PLUGBOARD_LOG_DEBUG  ? spdlog::level::debug
               : level == PLUGBOARD_LOG_INFO ? spdlog::level::info
               : level == PLUGBOARD_LOG_WARN ? spdlog::level::warn
                                             : spdlog::level::err;
    spdlog::log(spd, "[{}] {}", host->plugin, std::string_view(message, len));
  }
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
  try {
    namespace mode = boost::dll::load_mode;
    boost::dll::shared_library so(path, mode::rtld_local | mode::rtld_now);
    if (!so.has(PLUGBOARD_ENTRY_ALIAS_NAME)) {
      return Error(who + ": entry point '" PLUGBOARD_ENTRY_ALIAS_NAME
                         "' not found. Was it built with PLUGBOARD_PLUGIN from the plugboard SDK?");
    }
    lib->entry_ = boost::dll::import_alias<const plugboard_plugin_api*()>(std::move(so),
                                                              PLUGBOARD_ENTRY_ALIAS_NAME);
  } catch (const std::exception& e) {
    return Error(who + ": cannot load: " + dlerrorText(e));
  }

  const plugboard_plugin_api* api = lib->entry_();
  if (api == nullptr) return Error(who + ": its entry point returned no API table");
  if (api->abi_major != PLUGBOARD_ABI_MAJOR) {
    return Error("Wrong ABI version on " + who + ". Got version " +
                 std::to_string(api->abi_major) + "." + std::to_string(api->abi_minor) +
                 ", supported version is " + std::to_string(PLUGBOARD_ABI_MAJOR) + "." +
                 std::to_string(PLUGBOARD_ABI_MINOR) + ". Rebuild it against this SDK.");
  }
  if (api->abi_minor > PLUGBOARD_ABI_MINOR) {
    return Error(who + " needs ABI " + std::to_string(api->abi_major) + "." +
                 std::to_string(api->abi_minor) + ", this runtime supports up to " +
                 std::to_string(PLUGBOARD_ABI_MAJOR) + "." + std::to_string(PLUGBOARD_ABI_MINOR) +
                 ". Upgrade plugboard or rebuild the plugin against this SDK.");
  }
  if (api->struct_size < kMinApiSize) {
    return Error(who + ": API table is " + std::to_string(api->struct_size) +
                 " bytes, ABI 1.0 needs at least " + std::to_string(kMinApiSize));
  }
  if (api->manifest == nullptr || api->create == nullptr || api->execute == nullptr ||
      api->cancel == nullptr || api->destroy == nullptr) {
    return Error(who + ": API table has a null entry");
  }
  auto loaded = parseManifest(std::string_view(api->manifest, api->manifest_len));
  if (!loaded) return Error(who + ": the loaded manifest is invalid: " + loaded.error().message());
  if (Json::parse(loaded->text) != Json::parse(expected->text)) {
    return Error(who + ": the manifest its entry point returns differs from the one in its " +
                 PLUGBOARD_MANIFEST_SECTION + " section");
  }
  lib->api_ = api;
  lib->manifest_ = std::move(*loaded);
  return lib;
}

std::string PluginLibrary::abiVersion() const {
  return std::to_string(api_->abi_major) + "." + std::to_string(api_->abi_minor);
}

Expected<std::unique_ptr<PluginInstance>> PluginLibrary::createInstance(const Json& config) {
  auto host = std::make_unique<PluginInstance::Host>();
  host->plugin = manifest_.name;
  host->abi.struct_size = sizeof(plugboard_host);
  host->abi.ctx = host.get();
  host->abi.log = &PluginInstance::Host::log;
  const std::string text = config.dump();
  std::optional<std::string> error;
  void* handle = api_->create(&host->abi, text.data(), text.size(), &collect, &error);
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

void PluginInstance::cancel(std::uint64_t call_id) { library_->api_->cancel(handle_, call_id); }

}  // namespace plugboard::core

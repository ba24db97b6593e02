#include "core/loader.h"

#include <optional>
#include <string_view>

#include <spdlog/spdlog.h>

#include "core/module.h"

namespace plugboard::core {
namespace fs = std::filesystem;

Expected<Manifest> detail::checkLoadedManifest(std::string_view text, const Manifest& expected,
                                               const std::string& who) {
  auto loaded = parseManifest(text);
  if (!loaded) return Error(who + ": the loaded manifest is invalid: " + loaded.error().message());
  if (Json::parse(loaded->text) != Json::parse(expected.text)) {
    return Error(who + ": the manifest its entry point returns differs from the one in its " +
                 PLUGBOARD_MANIFEST_SECTION + " section");
  }
  return loaded;
}

host::LogFn detail::logTo(std::string module_name) {
  return [name = std::move(module_name)](int level, std::string_view message) {
    auto spd = level <= PLUGBOARD_LOG_DEBUG  ? spdlog::level::debug
               : level == PLUGBOARD_LOG_INFO ? spdlog::level::info
               : level == PLUGBOARD_LOG_WARN ? spdlog::level::warn
                                             : spdlog::level::err;
    spdlog::log(spd, "[{}] {}", name, message);
  };
}

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
  auto native = host::NativeLibrary::load(path, expected->name);
  if (!native) return native.error();
  const std::string who = "plugin '" + expected->name + "' (" + path.string() + ")";
  auto manifest = detail::checkLoadedManifest((*native)->manifestText(), *expected, who);
  if (!manifest) return manifest.error();
  std::shared_ptr<PluginLibrary> lib(new PluginLibrary());
  lib->file_ = path;
  lib->native_ = std::move(*native);
  lib->manifest_ = std::move(*manifest);
  return lib;
}

Expected<std::unique_ptr<PluginInstance>> PluginLibrary::createInstance(const Json& config) {
  auto native = native_->createInstance(config.dump(), detail::logTo(manifest_.name));
  if (!native) return native.error();
  return std::unique_ptr<PluginInstance>(
      new PluginInstance(shared_from_this(), std::move(*native)));
}

PluginInstance::PluginInstance(std::shared_ptr<PluginLibrary> library,
                               std::unique_ptr<host::NativeInstance> native)
    : library_(std::move(library)), native_(std::move(native)) {}

PluginInstance::~PluginInstance() = default;

Outcome PluginInstance::call(const Json& request, std::uint64_t call_id) {
  return callText(request.dump(-1, ' ', false, Json::error_handler_t::replace), call_id);
}

Outcome PluginInstance::callText(std::string_view request, std::uint64_t call_id) {
  // The result is parsed straight from the plugin's buffer, inside the callback.
  struct Response {
    std::optional<Outcome> outcome;
    const std::string* plugin;
  } response{std::nullopt, &library_->manifest().name};
  auto parse = [](void* ctx, const char* json, size_t len) {
    auto* r = static_cast<Response*>(ctx);
    r->outcome = parseOutcome(std::string_view(json, len), *r->plugin);
  };
  native_->execute(call_id, request, parse, &response);
  if (!response.outcome) {
    return Outcome::error("plugin '" + manifest().name + "' returned without a result");
  }
  return std::move(*response.outcome);
}

std::string PluginInstance::callRaw(std::string_view request, std::uint64_t call_id) {
  return native_->execute(call_id, request);
}

void PluginInstance::cancel(std::uint64_t call_id) { native_->cancel(call_id); }

}  // namespace plugboard::core

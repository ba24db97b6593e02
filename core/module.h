// core/module.h: loading a plugboard module, a plugin or a deployer `.so`.
//
// Internal to the core. loadModule() dlopens `path` (RTLD_LOCAL | RTLD_NOW) through
// Boost.DLL's import_alias, calls the exported entry point, and checks the table it
// returns: ABI major equal, minor not higher, the struct large enough for ABI 1.0, and a
// manifest equal to the one in the file's section.
#ifndef PLUGBOARD_CORE_MODULE_H_
#define PLUGBOARD_CORE_MODULE_H_

#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include <boost/dll/import.hpp>
#include <boost/dll/shared_library.hpp>

#include "core/expected.h"
#include "core/manifest.h"
#include "plugboard/abi.h"

namespace plugboard::core::detail {

// The text of a dlopen failure, without Boost's wrapping.
std::string dlerrorText(const std::exception& e);

// The services a module instance gets from the runtime (plugboard_host): its log lines go
// to the runtime's log, tagged with `name`.
struct ModuleHost {
  explicit ModuleHost(std::string module_name);
  ModuleHost(const ModuleHost&) = delete;
  ModuleHost& operator=(const ModuleHost&) = delete;
  plugboard_host abi{};
  std::string name;
};

// Collects a JSON answer given through a plugboard_respond_fn; ctx: std::optional<std::string>*.
void collectText(void* ctx, const char* json, size_t len);

template <class Api>
struct LoadedModule {
  std::function<const Api*()> entry;  // holds the library's reference
  const Api* api = nullptr;
  Manifest manifest;
};

// `who` names the module in errors ("plugin 'x' (/path)"); `alias` is the exported alias;
// `macro` the SDK macro that makes it; `min_size` the bytes of an ABI 1.0 table.
template <class Api>
Expected<LoadedModule<Api>> loadModule(const std::filesystem::path& path, const Manifest& expected,
                                       const std::string& who, const char* alias, const char* macro,
                                       std::size_t min_size) {
  LoadedModule<Api> out;
  try {
    namespace mode = boost::dll::load_mode;
    boost::dll::shared_library so(path, mode::rtld_local | mode::rtld_now);
    if (!so.has(alias)) {
      return Error(who + ": entry point '" + alias + "' not found. Was it built with " + macro +
                   " from the plugboard SDK?");
    }
    out.entry = boost::dll::import_alias<const Api*()>(std::move(so), alias);
  } catch (const std::exception& e) {
    return Error(who + ": cannot load: " + dlerrorText(e));
  }
  const Api* api = out.entry();
  if (api == nullptr) return Error(who + ": its entry point returned no API table");
  if (api->abi_major != PLUGBOARD_ABI_MAJOR) {
    return Error("Wrong ABI version on " + who + ". Got version " + std::to_string(api->abi_major) + "." +
                 std::to_string(api->abi_minor) + ", supported version is " + std::to_string(PLUGBOARD_ABI_MAJOR) +
                 "." + std::to_string(PLUGBOARD_ABI_MINOR) + ". Rebuild it against this SDK.");
  }
  if (api->abi_minor > PLUGBOARD_ABI_MINOR) {
    return Error(who + " needs ABI " + std::to_string(api->abi_major) + "." + std::to_string(api->abi_minor) +
                 ", this runtime supports up to " + std::to_string(PLUGBOARD_ABI_MAJOR) + "." +
                 std::to_string(PLUGBOARD_ABI_MINOR) + ". Upgrade plugboard or rebuild it against this SDK.");
  }
  if (api->struct_size < min_size) {
    return Error(who + ": API table is " + std::to_string(api->struct_size) + " bytes, ABI 1.0 needs at least " +
                 std::to_string(min_size));
  }
  if (api->manifest == nullptr) return Error(who + ": API table has a null entry");
  auto loaded = parseManifest(std::string_view(api->manifest, api->manifest_len));
  if (!loaded) return Error(who + ": the loaded manifest is invalid: " + loaded.error().message());
  if (Json::parse(loaded->text) != Json::parse(expected.text)) {
    return Error(who + ": the manifest its entry point returns differs from the one in its " +
                 PLUGBOARD_MANIFEST_SECTION + " section");
  }
  out.api = api;
  out.manifest = std::move(*loaded);
  return out;
}

}  // namespace plugboard::core::detail

#endif  // PLUGBOARD_CORE_MODULE_H_

#include "core/launch/module.h"

#include <plugboard/host/native.h>
#include <plugboard/host/trust.h>
#include <spdlog/spdlog.h>

#include "plugboard/abi.h"

namespace plugboard::core {

Expected<Manifest> detail::checkLoadedManifest(std::string_view text, const Manifest& expected,
                                               const std::string& who) {
  auto loaded = parseManifest(text);
  if (!loaded) return Error(who + ": the loaded manifest is invalid: " + loaded.error().message());
  if (!sameManifest(*loaded, expected)) {
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

Expected<std::string> checkPluginLoads(const std::filesystem::path& file,
                                       const Manifest& expected) {
  // Loaded from the descriptor the default rules checked, as every plugin is.
  auto opened = host::openTrusted(file, host::TrustRules{});
  if (!opened) return host::refusal(file, opened.error()).error();
  auto native = host::NativeLibrary::load(host::loadablePath(opened->fd), expected.name);
  if (!native) return native.error();
  const std::string who = "plugin '" + expected.name + "' (" + file.string() + ")";
  if (auto manifest = detail::checkLoadedManifest((*native)->manifestText(), expected, who);
      !manifest) {
    return manifest.error();
  }
  return (*native)->abiVersion();
}

}  // namespace plugboard::core

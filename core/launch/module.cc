#include "core/launch/module.h"

#include <plugboard/host/native.h>
#include <plugboard/host/trust.h>
#include <spdlog/spdlog.h>

#include "core/launch/call_log.h"
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

namespace {

void logLine(const std::string& module_name, std::uint64_t call_id, int level,
             std::string_view message) {
  std::string label;
  if (auto found = findCallLog(call_id); found.log != nullptr) {
    found.log->add(level, message);
    label = found.log->label();
  }
  auto spd = level <= PLUGBOARD_LOG_DEBUG  ? spdlog::level::debug
             : level == PLUGBOARD_LOG_INFO ? spdlog::level::info
             : level == PLUGBOARD_LOG_WARN ? spdlog::level::warn
                                           : spdlog::level::err;
  if (label.empty()) {
    spdlog::log(spd, "[{}] {}", module_name, message);
  } else {
    spdlog::log(spd, "[{}] {}: {}", module_name, label, message);
  }
}

}  // namespace

std::unique_ptr<host::HostServices> detail::hostServices(std::string module_name) {
  auto name = std::make_shared<const std::string>(std::move(module_name));
  return std::make_unique<host::HostServices>(
      [name](int level, std::string_view message) { logLine(*name, 0, level, message); },
      [name](std::uint64_t call_id, int level, std::string_view message) {
        // Id 0 is never a call's (PluginHandle::newCallId() starts at 1).
        if (call_id != 0) logLine(*name, call_id, level, message);
      });
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

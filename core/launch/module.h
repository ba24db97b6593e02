// core/launch/module.h: what the core adds to the host kit's module loading
// (plugboard/host/module.h) for plugins and deployers.
//
// loadModule() (internal to the core) loads and checks a module through the kit, then
// checks that the manifest its entry point returns is valid and equals the one in the
// file's section (`expected`). Free functions; thread-safe.
#ifndef PLUGBOARD_CORE_LAUNCH_MODULE_H_
#define PLUGBOARD_CORE_LAUNCH_MODULE_H_

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <plugboard/host/module.h>

#include "core/base/expected.h"
#include "core/manifests/manifest.h"

namespace plugboard::core::detail {

// The parsed `text`, checked against `expected`; errors name the module as `who`.
Expected<Manifest> checkLoadedManifest(std::string_view text, const Manifest& expected,
                                       const std::string& who);

// A module instance's services: its log lines into the runtime's log, tagged
// "[module_name] ", and kept with the call they belong to (core/launch/call_log.h): a line
// written on the thread making a call, or for a call by its id. The runtime's log names
// that call ("[module_name] step hello: ...").
std::unique_ptr<host::HostServices> hostServices(std::string module_name);

// The kit's module (entry point and table) with its parsed manifest.
template <class Api>
struct LoadedModule : host::Module<Api> {
  Manifest manifest;
};

// `who` names the module in errors ("deployer 'x' (/path)").
template <class Api>
Expected<LoadedModule<Api>> loadModule(const std::filesystem::path& path, const Manifest& expected,
                                       const std::string& who, const host::ModuleKind& kind) {
  auto module = host::loadModule<Api>(path, who, kind);
  if (!module) return module.error();
  auto manifest = checkLoadedManifest(module->manifest(), expected, who);
  if (!manifest) return manifest.error();
  LoadedModule<Api> out;
  static_cast<host::Module<Api>&>(out) = std::move(*module);
  out.manifest = std::move(*manifest);
  return out;
}

}  // namespace plugboard::core::detail

namespace plugboard::core {

// Loads plugin `file` into this process, checks its ABI and that the manifest its entry
// point returns equals `expected`, and unloads it: what `plugboard inspect --load`
// reports. Returns the ABI version it was built with ("1.0"). Runs the plugin's static
// initializers: for diagnostics, never on the path that serves calls.
Expected<std::string> checkPluginLoads(const std::filesystem::path& file, const Manifest& expected);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_LAUNCH_MODULE_H_

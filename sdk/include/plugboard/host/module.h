// plugboard/host/module.h: loading a plugboard module (a plugin or a deployer `.so`)
// through the C ABI of plugboard/abi.h, and the services a module instance gets.
//
// loadModule() dlopens a file (RTLD_LOCAL | RTLD_NOW) through Boost.DLL, calls the
// exported entry point and checks the table it returns: ABI major equal, minor
// not higher, the struct large enough for ABI 1.0, a manifest present. It does not parse
// the manifest (the caller may compare it with the one in the file's section). Errors
// name the module as `who` says ("plugin 'x' (/path)").
//
// Thread-safety: free functions are thread-safe. A Module is immutable; copies share the
// library, which stays mapped while any copy (or a function taken from it) lives.
// HostServices::log may be called from any thread; `log` must be thread-safe.
//
// Loading and unloading a module take one lock (per copy of the kit), as the dynamic loader
// does inside dlopen and dlclose. The loader's own lock is invisible to ThreadSanitizer, and
// so is the unmapping inside dlclose: without this lock, a library loaded where an unloaded
// one was (a new version of a plugin after a reload) looks to it as racing with the old one.
#ifndef PLUGBOARD_HOST_MODULE_H_
#define PLUGBOARD_HOST_MODULE_H_

#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/dll/shared_library.hpp>

#include "plugboard/abi.h"
#include "plugboard/host/expected.h"
#include "plugboard/host/spawn.h"

namespace plugboard::host {

// What loading needs to know of one kind of module.
struct ModuleKind {
  const char* alias;     // the exported alias, e.g. PLUGBOARD_ENTRY_ALIAS_NAME
  const char* macro;     // the SDK macro that exports it, for the hint when it is missing
  std::size_t min_size;  // bytes of an ABI 1.0 table
};

inline constexpr ModuleKind kPluginModule{PLUGBOARD_ENTRY_ALIAS_NAME, "PLUGBOARD_PLUGIN",
                                          offsetof(plugboard_plugin_api, destroy) + sizeof(void*)};
inline constexpr ModuleKind kDeployerModule{
    PLUGBOARD_DEPLOYER_ALIAS_NAME, "PLUGBOARD_DEPLOYER",
    offsetof(plugboard_deployer_api, destroy) + sizeof(void*)};

// A loaded module: its entry point (which holds the library mapped) and the checked table.
template <class Api>
struct Module {
  std::function<const Api*()> entry;
  const Api* api = nullptr;
  // The manifest JSON text the entry point gives.
  std::string_view manifest() const { return {api->manifest, api->manifest_len}; }
  // "1.0": the ABI version the module was built with.
  std::string abiVersion() const {
    return std::to_string(api->abi_major) + "." + std::to_string(api->abi_minor);
  }
};

// The text of a dlopen failure, without Boost's wrapping.
std::string dlerrorText(const std::exception& e);

// A loaded library; the last copy unloads it under the loading lock.
using SharedLibrary = std::shared_ptr<const boost::dll::shared_library>;

// "/proc/self/fd/N" for `fd`, the name under which to load the file it holds (dlopen of a
// descriptor opened and checked before: no path is resolved again). The dynamic loader
// knows a library by the name it was opened with, so a library loaded under N earlier and
// never unmapped would be taken for this file: then `fd` moves to another number and N is
// kept open for good. Keep `fd` open while the library may be loaded from it.
std::string loadablePath(Fd& fd);

// Opens `path` and checks that it exports kind.alias.
Expected<SharedLibrary> openModuleFile(const std::filesystem::path& path, const std::string& who,
                                       const ModuleKind& kind);

// Checks a table's version and size as described at the top of this file.
Status checkAbi(const std::string& who, std::uint32_t abi_major, std::uint32_t abi_minor,
                std::uint32_t struct_size, std::size_t min_size);

template <class Api>
Expected<Module<Api>> loadModule(const std::filesystem::path& path, const std::string& who,
                                 const ModuleKind& kind) {
  auto so = openModuleFile(path, who, kind);
  if (!so) return so.error();
  Module<Api> out;
  try {
    // What Boost.DLL's import_alias does, holding the library as SharedLibrary instead.
    const Api* (*entry)() = &(*so)->template get_alias<const Api*()>(kind.alias);
    out.entry = [library = std::move(*so), entry] { return entry(); };
  } catch (const std::exception& e) {
    return Error(who + ": cannot load: " + dlerrorText(e));
  }
  const Api* api = out.entry();
  if (api == nullptr) return Error(who + ": its entry point returned no API table");
  if (Status st = checkAbi(who, api->abi_major, api->abi_minor, api->struct_size, kind.min_size);
      !st) {
    return st.error();
  }
  if (api->manifest == nullptr) return Error(who + ": API table has a null entry");
  out.api = api;
  return out;
}

// Receives a log line of a module instance: a plugboard_log_level and the text.
using LogFn = std::function<void(int level, std::string_view message)>;

// Receives a log line a module wrote for one of its calls (plugboard_host.log_call).
using CallLogFn = std::function<void(std::uint64_t call_id, int level, std::string_view message)>;

// The services (plugboard_host) a module instance gets: its log lines go to `log`, those
// it writes for a call to `call_log` (when null: to `log`). The instance keeps the address
// of abi(): keep this object alive and in place until the instance is destroyed.
class HostServices {
 public:
  explicit HostServices(LogFn log, CallLogFn call_log = nullptr);
  HostServices(const HostServices&) = delete;
  HostServices& operator=(const HostServices&) = delete;
  const plugboard_host* abi() const { return &abi_; }

 private:
  plugboard_host abi_{};
  LogFn log_;
  CallLogFn call_log_;
};

// A plugboard_respond_fn that stores the JSON it is given; ctx: std::optional<std::string>*.
void collectText(void* ctx, const char* json, size_t len);

// The "message" of a result JSON of phase "Error" (as create and open answer a failure);
// "no reason given" when there is none.
std::string errorMessage(const std::optional<std::string>& result_json);

}  // namespace plugboard::host

#endif  // PLUGBOARD_HOST_MODULE_H_

// core/loader.h: loading a plugin `.so` and calling it through the C ABI.
//
// PluginLibrary::load() loads a file through the host kit (plugboard/host/native.h:
// dlopen with RTLD_LOCAL | RTLD_NOW, the ABI version and table checked) and checks that
// the manifest the entry point returns equals the one in the file's section. The
// plugin's log lines go to the runtime's log, tagged with its name. Each PluginInstance holds a reference to its library: the library is unmapped
// only after the last instance and the last PluginLibrary reference are gone.
//
// Thread-safety: PluginLibrary is immutable after load. PluginInstance::call() may run
// concurrently when the manifest allows it ("concurrency":"parallel"); the caller
// serialises calls to a serial plugin. cancel() is safe from any thread.
#ifndef PLUGBOARD_CORE_LOADER_H_
#define PLUGBOARD_CORE_LOADER_H_

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "core/catalog.h"
#include "core/expected.h"
#include "core/manifest.h"
#include "core/outcome.h"
#include "core/plugin_handle.h"
#include "plugboard/abi.h"
#include "plugboard/host/native.h"

namespace plugboard::core {

class PluginInstance;

class PluginLibrary : public std::enable_shared_from_this<PluginLibrary> {
 public:
  // Loads `file`. When `expected` is given, the loaded manifest must equal it; otherwise
  // the manifest is read from the file's section first.
  static Expected<std::shared_ptr<PluginLibrary>> load(const std::filesystem::path& file,
                                                       const Manifest* expected = nullptr);
  static Expected<std::shared_ptr<PluginLibrary>> load(const CatalogEntry& entry) {
    return load(entry.loadPath(), &entry.manifest);
  }

  const Manifest& manifest() const { return manifest_; }
  const std::filesystem::path& file() const { return file_; }
  // The ABI version the plugin was built with, e.g. "1.0".
  std::string abiVersion() const { return native_->abiVersion(); }

  // Creates an instance. `config` must be a JSON object.
  Expected<std::unique_ptr<PluginInstance>> createInstance(const Json& config = Json::object());

 private:
  PluginLibrary() = default;
  std::shared_ptr<host::NativeLibrary> native_;
  Manifest manifest_;
  std::filesystem::path file_;
};

class PluginInstance : public PluginHandle {
 public:
  ~PluginInstance() override;
  PluginInstance(const PluginInstance&) = delete;
  PluginInstance& operator=(const PluginInstance&) = delete;

  const Manifest& manifest() const override { return library_->manifest(); }
  // Runs one call and blocks until the plugin responds.
  Outcome call(const Json& request, std::uint64_t call_id);
  Outcome call(const Json& request) { return call(request, newCallId()); }
  // The same with the request already serialised (a JSON object).
  Outcome callText(std::string_view request_json, std::uint64_t call_id) override;
  // The same, answering the plugin's result JSON as it gave it, unchecked.
  std::string callRaw(std::string_view request_json, std::uint64_t call_id);
  void cancel(std::uint64_t call_id) override;

 private:
  friend class PluginLibrary;
  PluginInstance(std::shared_ptr<PluginLibrary> library, std::unique_ptr<host::NativeInstance> native);

  std::shared_ptr<PluginLibrary> library_;
  std::unique_ptr<host::NativeInstance> native_;  // holds the library mapped
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_LOADER_H_

// plugboard/host/native.h: a native plugin `.so`, loaded into this process and called
// through the C ABI (plugboard/abi.h), for deployers and hosts of plugins.
//
// NativeLibrary::load() loads the file as loadModule() does (plugboard/host/module.h) and
// checks that the table has every function. The manifest is the text the entry point
// gives, unparsed. createInstance() creates one instance with its configuration; the
// instance's log lines go to the caller's LogFn. Each NativeInstance holds a reference
// to its library: the library is unmapped only after the last instance and the last
// NativeLibrary reference are gone.
//
// Thread-safety: NativeLibrary is immutable after load. NativeInstance::execute() may run
// concurrently when the manifest allows it ("concurrency":"parallel"); the caller
// serialises calls to a serial plugin. cancel() is safe from any thread.
#ifndef PLUGBOARD_HOST_NATIVE_H_
#define PLUGBOARD_HOST_NATIVE_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "plugboard/abi.h"
#include "plugboard/host/expected.h"
#include "plugboard/host/module.h"

namespace plugboard::host {

class NativeInstance;

class NativeLibrary : public std::enable_shared_from_this<NativeLibrary> {
 public:
  // Loads `file`. `name` is the plugin's name for messages, when the caller knows it.
  static Expected<std::shared_ptr<NativeLibrary>> load(const std::filesystem::path& file,
                                                       const std::string& name = "");

  const std::filesystem::path& file() const { return file_; }
  // The manifest JSON text the entry point gives.
  std::string_view manifestText() const { return module_.manifest(); }
  // "1.0": the ABI version the plugin was built with.
  std::string abiVersion() const { return module_.abiVersion(); }
  // The name given to load(), else "name" from the manifest text, else "?".
  const std::string& name() const { return name_; }

  // Creates an instance with `config_json` (a JSON object's text); its log lines go to
  // `log`. The error quotes the plugin's reason when it refuses.
  Expected<std::unique_ptr<NativeInstance>> createInstance(std::string_view config_json = "{}",
                                                           LogFn log = nullptr);

 private:
  NativeLibrary() = default;
  friend class NativeInstance;
  Module<plugboard_plugin_api> module_;
  std::filesystem::path file_;
  std::string name_;
};

class NativeInstance {
 public:
  ~NativeInstance();
  NativeInstance(const NativeInstance&) = delete;
  NativeInstance& operator=(const NativeInstance&) = delete;

  const NativeLibrary& library() const { return *library_; }
  // Runs one call and blocks until the plugin responds: `respond` gets the result JSON,
  // once, before this returns (the bytes are valid only during that call).
  void execute(std::uint64_t call_id, std::string_view request_json, plugboard_respond_fn respond,
               void* respond_ctx);
  // The same, answering the result JSON text as the plugin gave it, unchecked (empty if
  // it gave none).
  std::string execute(std::uint64_t call_id, std::string_view request_json);
  void cancel(std::uint64_t call_id);

 private:
  friend class NativeLibrary;
  NativeInstance(std::shared_ptr<NativeLibrary> library, std::unique_ptr<HostServices> services);

  std::shared_ptr<NativeLibrary> library_;  // released last: unmaps after destroy()
  std::unique_ptr<HostServices> services_;  // must outlive handle_
  void* handle_ = nullptr;
};

}  // namespace plugboard::host

#endif  // PLUGBOARD_HOST_NATIVE_H_
